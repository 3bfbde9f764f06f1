"""The `restify` command."""
import argparse
import asyncio
import os
import sys
from datetime import timedelta
from pathlib import Path

from service.console.logs import FORMATS
from service.console.runtime import ApplicationError
from service.core.kernel.errors import DeclarationError


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="restify", description="Repositories over MongoDB as REST, GraphQL and MCP.")
    parser.add_argument("--app-dir", default=".", help="the application directory (default: current)")
    commands = parser.add_subparsers(dest="command", required=True)

    serve = commands.add_parser("serve", help="run the web service")
    serve.add_argument("--port", type=int, default=None)
    serve.add_argument("--host", default=None,
                       help="address to listen on (default: server.host, HOST, else 127.0.0.1; 0.0.0.0 for all)")
    serve.add_argument("--processes", type=_processes, default=1,
                       help="worker processes on the one port, each with its own SO_REUSEPORT socket "
                            "(default 1; 0 = one per CPU)")
    serve.add_argument("--watch", action="store_true",
                       help="regenerate schema/ and reload repositories when a repository module changes")
    serve.add_argument("--log-format", choices=FORMATS, default=None,
                       help="log lines as text or as JSON objects (default: the log.format setting, text)")
    serve.add_argument("--app-dir", dest="app_dir_sub", default=None)

    new = commands.add_parser("new", help="write a runnable application into a new or empty directory")
    new.add_argument("directory")

    repository = commands.add_parser("repository", help="write repositories/<name>.py for <Name>Repository")
    repository.add_argument("name")
    repository.add_argument("--app-dir", dest="app_dir_sub", default=None)

    seed = commands.add_parser("seed",
                               help="run the application's seeder (repositories/seeders.py) on an empty database")
    seed.add_argument("--fresh", action="store_true", help="drop the application's collections first")
    seed.add_argument("--scale", type=_scale, default=1.0,
                      help="multiply the amounts the seeder asks for with seeder.amount(n) (default 1)")
    seed.add_argument("--app-dir", dest="app_dir_sub", default=None)

    token = commands.add_parser("token:create", help="print a new bearer token for a user")
    token.add_argument("email")
    token.add_argument("--abilities", default="*",
                       help="what the token may do, comma separated: * or <repository>:<read|write|action key> "
                            "(default *)")
    token.add_argument("--name", default="console", help="the token's name in the user's token list")
    token.add_argument("--app-dir", dest="app_dir_sub", default=None)

    revoke = commands.add_parser("token:revoke", help="revoke every token of a user")
    revoke.add_argument("email")
    revoke.add_argument("--app-dir", dest="app_dir_sub", default=None)

    mcp = commands.add_parser("mcp", help="serve the MCP tools over stdin/stdout (token from RESTIFY_TOKEN)")
    mcp.add_argument("--app-dir", dest="app_dir_sub", default=None)

    generate = commands.add_parser("graphql:generate", help="write schema/schema.graphql from the repositories")
    generate.add_argument("--resolvers", action="store_true", help="also write schema/resolvers/<name>.py")
    generate.add_argument("--force", action="store_true",
                          help="overwrite existing resolver files, and a schema file edited by hand")
    generate.add_argument("--output-path", default=None, help="output directory (default: schema)")
    generate.add_argument("--schema-file", default=None, help="schema file name (default: schema.graphql)")
    generate.add_argument("--quiet", action="store_true", help="print only what changed or failed")
    generate.add_argument("--app-dir", dest="app_dir_sub", default=None)

    publish = commands.add_parser("publish", help="write a config file: graphql-config")
    publish.add_argument("what", choices=["graphql-config"])
    publish.add_argument("--force", action="store_true")
    publish.add_argument("--app-dir", dest="app_dir_sub", default=None)

    watch = commands.add_parser("watch", help="regenerate schema/ whenever a repository module changes")
    watch.add_argument("--app-dir", dest="app_dir_sub", default=None)

    prune = commands.add_parser("storage:prune", help="list files no record references and temporary files "
                                "left by crashes (--apply deletes them)")
    prune.add_argument("--apply", action="store_true", help="delete what is listed (default: only list)")
    prune.add_argument("--older-than", type=_seconds, default=None, metavar="SECONDS",
                       help="only what is older than this (default: files.stale_after_seconds)")
    prune.add_argument("--app-dir", dest="app_dir_sub", default=None)

    purge = commands.add_parser("trash:purge", help="delete for good the records of repositories with soft "
                                "deletes trashed longer ago than --older-than")
    purge.add_argument("--older-than", type=_age, required=True, metavar="AGE",
                       help="30d, 12h, 45m or 90s: records trashed longer ago than this are deleted")
    purge.add_argument("--app-dir", dest="app_dir_sub", default=None)

    mail = commands.add_parser("mail:failed", help="list the mail the outbox could not send (given up on, or "
                               "still retried)")
    mail.add_argument("--retry", action="store_true", help="put the messages given up on back in line")
    mail.add_argument("--app-dir", dest="app_dir_sub", default=None)

    hooks = commands.add_parser("webhooks:failed", help="list the webhook deliveries given up on")
    hooks.add_argument("--app-dir", dest="app_dir_sub", default=None)
    replay = commands.add_parser("webhooks:replay", help="send failed webhook deliveries again")
    replay.add_argument("ids", nargs="*", metavar="ID", help="deliveries to send again (webhooks:failed lists them)")
    replay.add_argument("--all", dest="every", action="store_true", help="every failed delivery")
    replay.add_argument("--app-dir", dest="app_dir_sub", default=None)

    indexes = commands.add_parser("indexes", help="print each repository's index plan beside the indexes "
                                  "the database has")
    indexes.add_argument("--app-dir", dest="app_dir_sub", default=None)

    openapi = commands.add_parser("openapi", help="print the OpenAPI 3.1 document of the REST API (no database needed)")
    openapi.add_argument("--app-dir", dest="app_dir_sub", default=None)
    return parser


def _scale(text: str) -> float:
    value = float(text)
    if not value > 0:
        raise argparse.ArgumentTypeError("must be a number above 0")
    return value


def _age(text: str) -> timedelta:
    from service.core.operations.trash import older_than
    try:
        return older_than(text)
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


def _processes(text: str) -> int:
    value = int(text)
    if value < 0:
        raise argparse.ArgumentTypeError("must be 0 (one per CPU) or more")
    return value


def _seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not 0 <= value < 10**9:
        raise argparse.ArgumentTypeError("must be a number of seconds, 0 or more")
    return value


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    app_dir = Path(getattr(args, "app_dir_sub", None) or args.app_dir).resolve()
    try:
        return _run(args, app_dir)
    except ApplicationError as error:  # already `file:line: message`, or a one-line hint
        print(error, file=sys.stderr)
        return 2
    except BrokenPipeError:  # `restify openapi | head`: the reader left; stop quietly
        _silence_stdout()
        return 1
    except DeclarationError as error:
        print(f"restify: broken declaration: {error}", file=sys.stderr)
        return 2
    except (ValueError, LookupError) as error:
        print(f"restify: {error}", file=sys.stderr)
        return 2


def _silence_stdout() -> None:
    """Points stdout at /dev/null so the interpreter's final flush cannot fail again."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    os.close(devnull)


def _run(args: argparse.Namespace, app_dir: Path) -> int:
    from service.console.runtime import build, database_uri, load_registry, settings_for

    if args.command == "new":
        from service.console.new_app import write_app
        print("\n".join(write_app(Path(args.directory).resolve())))  # ValueError: refused, see main()
        return 0
    if args.command == "repository":
        from service.console.scaffold import write_repository
        for line in write_repository(app_dir, args.name):
            print(line)
        return 0
    settings = settings_for(app_dir)
    if args.command == "graphql:generate":
        from service.console.graphql import generate
        return generate(settings, resolvers=args.resolvers, force=args.force, output_path=args.output_path,
                        schema_file=args.schema_file, quiet=args.quiet)
    if args.command == "publish":
        from service.graphql.config import publish
        try:
            print(f"Wrote {publish(app_dir, force=args.force)}")
        except FileExistsError as error:
            print(f"restify: {error}", file=sys.stderr)
            return 2
        return 0
    registry = load_registry(settings)  # every command below needs the application: fail here, once
    if args.command == "openapi":
        from service.openapi import document_json
        print(document_json(registry, settings), flush=True)
        return 0
    if args.command == "watch":
        from service.console.watching import watch
        return watch(settings)
    if args.command == "serve":
        from service.console.serve import serve
        from storage import IndexRefused
        try:
            return serve(settings, args.port, args.host, args.processes, args.watch, args.log_format)
        except (OSError, IndexRefused) as error:  # e.g. the port is taken: a message, not a traceback
            print(f"restify: cannot serve: {error}", file=sys.stderr)
            return 1
    if args.command == "indexes":
        from service.console.indexes import indexes
        return indexes(settings)
    if args.command == "storage:prune":
        from service.console.prune import prune
        return prune(settings, args.apply, args.older_than)
    if args.command == "trash:purge":
        from service.console.trash import purge_trash
        return purge_trash(settings, args.older_than)
    if args.command == "mail:failed":
        from service.console.mail import failed
        return failed(settings, args.retry)
    if args.command == "webhooks:failed":
        from service.console.webhooks import failed as webhooks_failed
        return webhooks_failed(settings)
    if args.command == "webhooks:replay":
        if bool(args.ids) == args.every:
            print("restify: webhooks:replay takes delivery ids or --all", file=sys.stderr)
            return 2
        from service.console.webhooks import replay
        return replay(settings, args.ids, args.every)
    if args.command == "mcp":
        from service.mcp.stdio import run_stdio
        with database_uri(settings) as uri:
            return run_stdio(lambda: build(settings, uri))  # built inside its event loop
    if args.command == "seed":
        from service.console.seed import find_seeder, run_seeder, seeder_path
        seed = find_seeder(settings)
        if seed is None:
            print(f"restify: no seeder: write {seeder_path(settings)} with `async def seed(seeder)`", file=sys.stderr)
            return 1
        with database_uri(settings) as uri:
            print(asyncio.run(run_seeder(build(settings, uri), seed, fresh=args.fresh, scale=args.scale)))
        return 0
    with database_uri(settings) as uri:
        app = build(settings, uri)
        if args.command == "token:create":
            from service.core.kernel import ValidationFailed
            from service.core.operations.auth import token_for_email
            abilities = [a.strip() for a in args.abilities.split(",") if a.strip()]
            try:
                print(asyncio.run(token_for_email(app, args.email, args.name, abilities)))
            except ValidationFailed as error:  # an unknown repository or action: say which
                raise ValueError(" ".join(m for messages in error.errors.values() for m in messages)) from None
        elif args.command == "token:revoke":
            from service.core.operations.auth import revoke_for_email
            print(f"Revoked {asyncio.run(revoke_for_email(app, args.email))} token(s) of {args.email}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
