"""How a server and its tools are named here: tool and section names made from the server's.

A server names its tools and itself as it likes (``files/read``, ``127.0.0.1``); a chain
needs names a model can write and a prompt section can carry. Characters they cannot
hold become ``_``, and a name that cannot start one gets a prefix.
"""

from __future__ import annotations

import os
import re

__all__ = ["label", "section_name", "tool_name"]

_UNSAFE = re.compile(r"[^A-Za-z0-9_.\-]")


def tool_name(name: str) -> str:
    """``name`` as a tool name: characters it cannot hold become ``_``.

    >>> tool_name("get-tiny-image"), tool_name("files/read"), tool_name("3d_render")
    ('get-tiny-image', 'files_read', '_3d_render')
    """
    name = _UNSAFE.sub("_", name)
    if not name or not (name[0].isalpha() or name[0] == "_"):
        name = "_" + name
    return name


def section_name(name: str) -> str:
    """A server's name as an extension's: a valid section name.

    >>> section_name("mcp-servers/everything"), section_name("127.0.0.1")
    ('mcp-servers_everything', 'mcp_127.0.0.1')
    """
    name = _UNSAFE.sub("_", name.strip())
    if not name or not (name[0].isalpha() or name[0] == "_"):
        name = "mcp_" + name
    return name.rstrip("_") or "mcp"


def label(target: str) -> str:
    """A name for a server before it gives its own: the command's or host's.

    >>> label("/usr/bin/node"), label("http://127.0.0.1:8000/mcp")
    ('node', 'mcp_127.0.0.1')
    """
    if "://" in target:
        host = target.split("://", 1)[1].split("/", 1)[0].rsplit("@", 1)[-1]
        return section_name(host.rsplit(":", 1)[0] if host.count(":") == 1 else host)
    return section_name(os.path.basename(target.rstrip("/")) or target)
