"""Turns the driver's connection failures into `Unavailable`, and values BSON cannot encode into
`Unstorable`, once for every operation."""
import functools
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any, ParamSpec, TypeVar

from pymongo.errors import AutoReconnect, ConnectionFailure, PyMongoError, ServerSelectionTimeoutError

from bson.errors import InvalidDocument

from storage.errors import Unavailable, Unstorable

P = ParamSpec("P")
T = TypeVar("T")


def unavailable_as_error(function: Callable[P, Awaitable[T]]) -> Callable[P, Coroutine[Any, Any, T]]:
    @functools.wraps(function)
    async def wrapper(*args: P.args, **kwargs: P.kwargs) -> T:
        try:
            return await function(*args, **kwargs)
        except (AutoReconnect, ConnectionFailure, ServerSelectionTimeoutError) as error:
            raise Unavailable(str(error)) from None
        except PyMongoError as error:
            if error.timeout:  # the operation's time ran out (timeoutMS): as good as unreachable
                raise Unavailable(str(error)) from None
            raise
        except UnicodeEncodeError:
            raise Unstorable("a string that is not valid text") from None
        except (OverflowError, InvalidDocument):
            raise Unstorable("a value outside what the database stores") from None

    return wrapper
