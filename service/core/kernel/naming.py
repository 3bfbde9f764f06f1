"""Name conversions shared by models, repositories and generators."""
import re

# Query parameters a field may not be named after: they mean something on every index.
RESERVED = {"page", "perPage", "per_page", "relatablePerPage", "search", "sort", "related", "include",
            "fields", "count", "cursor", "trashed", "force", "filter", "has"}
_WORD_BOUNDARY = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")


def snake(name: str) -> str:
    """`BlogPost` -> `blog_post`."""
    return _WORD_BOUNDARY.sub("_", name).lower()


def pascal(name: str) -> str:
    """`tags` -> `Tags`, `related_tags` -> `RelatedTags` (`attachPostTags`, `posts.attachTags`)."""
    return "".join(part[:1].upper() + part[1:] for part in name.split("_"))


def plural(word: str) -> str:
    """English plural good enough for collection names: post -> posts, category -> categories."""
    if word.endswith("y") and len(word) > 1 and word[-2] not in "aeiou":
        return word[:-1] + "ies"
    if word.endswith(("s", "x", "z", "ch", "sh")):
        return word + "es"
    return word + "s"


def collection_name(class_name: str) -> str:
    """`BlogPost` -> `blog_posts`: snake case, last word pluralized."""
    return plural(snake(class_name))


def attribute_label(name: str) -> str:
    """How a field is named in messages: `user_id` -> `user id`."""
    return name.replace("_", " ")
