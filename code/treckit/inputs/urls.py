"""Inputs named by URL -- ``s3://bucket/run``, ``gs://...``, ``http(s)://...``, any protocol fsspec knows --
read through fsspec (treckit's ``dask`` extra; s3fs comes with it, gcsfs and aiohttp are the usual extras
for ``gs://`` and ``http(s)://``).

Every command reads them as it reads a pipe: the whole content once, into memory (bounded like any whole
read), then detected and parsed by the one reader, so an error names the URL and the line.  The Dask engine's
workers read their own byte ranges (:func:`read_range`).

Where the storage lives is fsspec's and the storage library's configuration, read from the environment of
every process that reads (the workers too): ``FSSPEC_S3_ENDPOINT_URL=http://host:port`` (fsspec's
``FSSPEC_<PROTOCOL>_<OPTION>`` variables; an S3-compatible store such as MinIO or a local moto server) and
the usual ``AWS_ACCESS_KEY_ID`` / ``AWS_SECRET_ACCESS_KEY`` / ``AWS_PROFILE`` credentials.
"""
from __future__ import annotations

import os
import re

from ..console.errors import InputError, TreckitError
from ..dependencies import install_hint
from .limits import read_bounded

_URL = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://")


def is_url(path) -> bool:
    """Whether ``path`` is a URL (``scheme://...``) rather than a local path; ``file://`` counts (fsspec reads it)."""
    return isinstance(path, str) and _URL.match(path) is not None


def filesystem(url: str):
    """(fsspec file system, path inside it) for ``url``, with a clear error when fsspec or the protocol's
    library is missing, or the protocol is unknown."""
    try:
        from fsspec.core import url_to_fs
    except ImportError:
        raise InputError("reading a URL needs fsspec, which is not installed", path=url,
                         fix=f"{install_hint('dask')}, or download the file and pass its path") from None
    _endpoint_from_environment()
    try:
        return url_to_fs(url)
    except ImportError as exc:                 # fsspec: "Install s3fs to access S3"
        raise InputError(f"reading this URL needs a library that is not installed ({exc})", path=url,
                         fix=f"{install_hint('dask')} for s3://; the library fsspec names for other protocols") from None
    except ValueError as exc:                  # "Protocol not known"
        raise InputError(f"cannot read this URL ({exc})", path=url,
                         fix="use a protocol fsspec knows (s3://, gs://, http(s)://, file://) or a local path") from None


def _endpoint_from_environment() -> None:
    """fsspec reads its ``FSSPEC_*`` variables once, when first imported; a worker or a test that sets
    them later is read again here (cheap: a scan of the environment)."""
    if any(k.startswith("FSSPEC_") for k in os.environ):
        import fsspec.config
        fsspec.config.set_conf_env(fsspec.config.conf)


def connection_problem(exc: BaseException) -> str | None:
    """What kept a connection from being made, found anywhere in ``exc``'s chain of causes (storage and HTTP
    libraries wrap it, fsspec's HTTP even as FileNotFoundError): "connection refused", "host not found",
    "timed out" or "cannot connect"; None when no connection failed."""
    import socket

    chain: list[BaseException] = []
    cause: BaseException | None = exc
    while cause is not None and all(cause is not c for c in chain):
        chain.append(cause)
        reason = getattr(cause, "reason", None)          # urllib's URLError holds the socket's error as its reason
        cause = reason if isinstance(reason, BaseException) else (cause.__cause__ or cause.__context__)
    for kinds, problem in ((ConnectionRefusedError, "connection refused"), (socket.gaierror, "host not found"),
                           ((TimeoutError, socket.timeout), "timed out"), (ConnectionError, "cannot connect")):
        if any(isinstance(c, kinds) for c in chain):
            return problem
    if any(type(c).__name__ in ("ClientConnectorError", "ConnectTimeoutError", "EndpointConnectionError",
                                "NewConnectionError") for c in chain):
        return "cannot connect"
    return None


def _failure(exc: BaseException, url: str) -> TreckitError:
    """What went wrong reading ``url``, said so: a missing object, a refusal or missing credentials is bad input
    (exit 2), a failing network or store a runtime failure (exit 3).  A connection that could not be made is
    said as such (exit 2: the address, or a server that is not running; a timeout is exit 3), never as a
    missing file."""
    problem = connection_problem(exc)
    if problem == "timed out":                 # bad luck of the network, not a wrong address
        return TreckitError(f"{url}: cannot read: the connection timed out; check the network and try again")
    if problem is not None:
        return InputError(f"cannot connect to the server ({problem})", path=url,
                          fix="check the host and port in the URL, and that the server is running and reachable")
    if isinstance(exc, FileNotFoundError):
        return InputError("no such file or object", path=url, fix="check the URL (bucket, key, host)")
    if isinstance(exc, PermissionError):
        return InputError("access denied", path=url,
                          fix="check the credentials (AWS_ACCESS_KEY_ID / AWS_PROFILE ...) and the object's permissions")
    if isinstance(exc, IsADirectoryError):
        return InputError("is a folder, not a file", path=url, fix="give the URL of a file")
    if type(exc).__name__ in ("NoCredentialsError", "PartialCredentialsError"):    # botocore's: a setting, not a failure
        return InputError(f"no credentials to read it ({str(exc).splitlines()[0]})", path=url,
                          fix="set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (or AWS_PROFILE) in the environment of "
                              "every process that reads (the Dask workers too)")
    detail = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    return TreckitError(f"{url}: cannot read: {detail} ({type(exc).__name__}); check the URL, the network and "
                        "the store's endpoint (FSSPEC_S3_ENDPOINT_URL for an S3-compatible store)")


def url_size(url: str) -> int:
    fs, path = filesystem(url)
    try:
        info = fs.info(path)
    except Exception as exc:                   # noqa: BLE001 -- each storage library has its own errors
        raise _failure(exc, url) from None
    if info.get("type") == "directory":
        raise _failure(IsADirectoryError(url), url)
    return int(info.get("size") or 0)


def read_url(url: str, limit: int) -> bytes:
    """The whole content of ``url`` (at most ``limit`` bytes: beyond that, the error of any whole read)."""
    fs, path = filesystem(url)
    try:
        with fs.open(path, "rb") as fh:
            return read_bounded(fh, url, limit)
    except TreckitError:
        raise
    except Exception as exc:                   # noqa: BLE001
        raise _failure(exc, url) from None


def read_range(url: str, start: int, end: int) -> bytes:
    """Bytes ``start`` .. ``end`` of ``url`` (a local path or any URL): what a Dask worker reads of a huge run."""
    fs, path = filesystem(url)
    try:
        return fs.cat_file(path, start=start, end=end)
    except Exception as exc:                   # noqa: BLE001
        raise _failure(exc, url) from None
