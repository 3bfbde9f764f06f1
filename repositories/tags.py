from service import Repository, field


class TagRepository(Repository):
    mcp = ("index", "show", "store")

    def fields(self, request):
        return [field("name").required().rules("max:50", "unique:tags,name").searchable().sortable()]
