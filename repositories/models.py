"""The models namespace: repositories find their model here by name."""
from service import Model, belongs_to, belongs_to_many, has_many


class User(Model):
    posts = has_many("Post")


class Post(Model):
    user = belongs_to("User")
    comments = has_many("Comment")
    tags = belongs_to_many("Tag")


class Comment(Model):
    post = belongs_to("Post")
    user = belongs_to("User")


class Tag(Model):
    pass
