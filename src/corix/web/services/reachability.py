"""Whether the server an application lives at can be reached, said in words.

Registration checks an application by talking to it; an address that cannot be reached at
all would otherwise wait out the model client's retries and come back as a library's error
text. One connection attempt first gives the admin a sentence, at once.
"""

from __future__ import annotations

import asyncio
import re
import socket
from urllib.parse import urlsplit

URL = re.compile(r"https?://[^\s?#]+", re.IGNORECASE)


async def unreachable(spec: str, *, timeout_s: float = 5.0) -> str | None:
    """Why the first http(s) address in ``spec`` cannot be reached; ``None`` when it can
    (or the spec names no address)."""
    found = URL.search(spec)
    if found is None:
        return None
    parts = urlsplit(found.group(0))
    host = parts.hostname
    if not host:
        return f"'{found.group(0)}' names no host"
    try:
        port = parts.port or (443 if parts.scheme.lower() == "https" else 80)
    except ValueError:
        return f"'{found.group(0)}' has a port that is not a number between 0 and 65535"
    where = f"{host}:{port}"
    try:
        _, writer = await asyncio.wait_for(asyncio.open_connection(host, port), timeout_s)
    except TimeoutError:
        return f"no answer from {where} within {timeout_s:g} s (a firewall, or a wrong address?)"
    except socket.gaierror:
        return f"the host name '{host}' is not known (a typing error, or no network?)"
    except ConnectionRefusedError:
        return f"nothing is listening at {where} (is the server running, on that port?)"
    except OSError as exc:
        return f"{where} cannot be reached: {exc.strerror or exc}"
    writer.close()
    return None
