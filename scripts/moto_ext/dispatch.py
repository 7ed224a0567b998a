"""Request dispatch at the pinned moto's cost per request, not a directory listing's.

moto's `DomainDispatcherApplication.get_backend_for_host` asks, twice per request,
whether the request's host names one of moto's backend modules, and
`moto.backends.list_of_moto_modules` answers by listing moto's package directory with a
`stat` per entry (about 200). Profiled under the destroy crash test, that listing took a
third of the emulator's time per request. The package directory does not change while
the server runs, so the listing is made once: the same names in the same order, the same
answers, no filesystem calls."""
import functools
from typing import Callable, Iterable

import moto.backends

_originals: dict[str, Callable[[], Iterable[str]]] = {}


def install() -> None:
    """Replaces the listing once."""
    if _originals:
        return
    original = _originals["list_of_moto_modules"] = moto.backends.list_of_moto_modules
    moto.backends.list_of_moto_modules = functools.cache(lambda: tuple(original()))  # type: ignore[assignment]


def original_listing() -> list[str]:
    """The pinned moto's own listing, read from the directory now (for the tests)."""
    return list(_originals.get("list_of_moto_modules", moto.backends.list_of_moto_modules)())
