"""GraphQL: a schema generated from the repositories, resolvers over the operations layer."""
