"""The demo application: users, posts, comments and tags."""
