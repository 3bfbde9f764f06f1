"""Bulk mutations: per repository of model `<Type>`,

    create<Type>Bulk(input: [<Type>Input!]!): [<Type>!]!
    update<Type>Bulk(input: [<Type>BulkUpdate!]!): [<Type>!]!   (id, version, then the fields sent)
    delete<Type>Bulk(ids: [ID!]!): Boolean!

They run the bulk operations of `service.core.operations.bulk`: all or nothing, and a 422's errors keyed
`"<index>.<field>"` in `extensions.errors`.
"""
from typing import Any

from graphql import (
    GraphQLArgument, GraphQLBoolean, GraphQLField, GraphQLID, GraphQLInputField, GraphQLInputObjectType, GraphQLInt,
    GraphQLList, GraphQLNonNull, GraphQLObjectType, GraphQLResolveInfo,
)

from service.core.operations import bulk


def _list_of(item: Any) -> GraphQLNonNull:
    return GraphQLNonNull(GraphQLList(GraphQLNonNull(item)))


def update_input(type_name: str, data: GraphQLInputObjectType) -> GraphQLInputObjectType:
    """`<Type>BulkUpdate`: the record's id and the version read (optional), then `<Type>Input`'s fields."""
    def fields() -> dict[str, GraphQLInputField]:
        members = {name: GraphQLInputField(field.type) for name, field in data.fields.items() if name != "_empty"}
        return {**members, bulk.ID: GraphQLInputField(GraphQLNonNull(GraphQLID)),
                bulk.VERSION: GraphQLInputField(GraphQLInt)}
    return GraphQLInputObjectType(f"{type_name}BulkUpdate", fields)


def bulk_mutations(type_name: str, obj: GraphQLObjectType, data: GraphQLInputObjectType) -> dict[str, GraphQLField]:
    """The three bulk mutations of one repository."""
    return {
        f"create{type_name}Bulk": GraphQLField(_list_of(obj), {"input": GraphQLArgument(_list_of(data))}),
        f"update{type_name}Bulk": GraphQLField(_list_of(obj), {
            "input": GraphQLArgument(_list_of(update_input(type_name, data)))}),
        f"delete{type_name}Bulk": GraphQLField(GraphQLNonNull(GraphQLBoolean),
                                               {"ids": GraphQLArgument(_list_of(GraphQLID))}),
    }


class BulkResolvers:
    """The bulk mutations' resolvers, part of `RepositoryResolvers` (which gives `app`, `resource`,
    `context` and `_reloaded`); generated resolver classes may override them."""
    app: Any
    resource: str
    context: Any
    _reloaded: Any

    async def create_bulk(self, info: GraphQLResolveInfo, input: list[dict[str, Any]]) -> list[dict[str, Any]]:
        body = await bulk.store_bulk(self.app, self.resource, [dict(item) for item in input], self.context(info))
        return [await self._reloaded(info, data) for data in body["data"]]

    async def update_bulk(self, info: GraphQLResolveInfo, input: list[dict[str, Any]]) -> list[dict[str, Any]]:
        # A null version is "not given", as a left-out one: the record is changed at any version.
        items = [{k: v for k, v in item.items() if not (k == bulk.VERSION and v is None)} for item in input]
        body = await bulk.update_bulk(self.app, self.resource, items, self.context(info))
        return [await self._reloaded(info, data) for data in body["data"]]

    async def delete_bulk(self, info: GraphQLResolveInfo, ids: list[str]) -> bool:
        await bulk.delete_bulk(self.app, self.resource, list(ids), self.context(info))
        return True


def bind(mutation: GraphQLObjectType | None, type_name: str, resolvers: BulkResolvers, setter: Any) -> None:
    """Points the bulk mutations of `type_name` at `resolvers` (`setter` skips fields a schema lacks)."""
    setter(mutation, f"create{type_name}Bulk", lambda _, info, r=resolvers, **kw: r.create_bulk(info, **kw))
    setter(mutation, f"update{type_name}Bulk", lambda _, info, r=resolvers, **kw: r.update_bulk(info, **kw))
    setter(mutation, f"delete{type_name}Bulk", lambda _, info, r=resolvers, **kw: r.delete_bulk(info, **kw))
