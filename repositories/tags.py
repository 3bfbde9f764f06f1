from service import Repository, field


class TagRepository(Repository):
    def fields(self, request):
        return [field("name").required().rules("max:50", "unique:tags,name").searchable().sortable()]
