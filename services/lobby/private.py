"""Private tables' join codes: 6 characters from an alphabet without look-alikes, one Redis key
each (code -> table id), made when the table is created. Guessing is rate-limited where codes
are redeemed (services/clubs)."""

from __future__ import annotations

import re
import secrets

from services.lobby.model import LobbyTable
from shared.errors import BadInput, NotFound
from shared.infra.runtime import Runtime

CODE_ALPHABET = "23456789ABCDEFGHJKMNPQRSTUVWXYZ"
CODE_LENGTH = 6
_CODE = re.compile(f"[{CODE_ALPHABET}]{{{CODE_LENGTH}}}")
#: A code outlives any table that could use it (a table closes after its idle or waiting time).
CODE_TTL_SECONDS = 30 * 86_400


def new_code() -> str:
    """A random code."""
    return "".join(secrets.choice(CODE_ALPHABET) for _ in range(CODE_LENGTH))


def normal_code(code: str) -> str:
    """A code as typed (any case, spaces around) in its one shape, else BadInput."""
    code = code.strip().upper()
    if not _CODE.fullmatch(code):
        raise BadInput(f"a code is {CODE_LENGTH} characters of {CODE_ALPHABET}")
    return code


class TableCodes:
    """The code index of private tables."""

    def __init__(self, runtime: Runtime) -> None:
        self.runtime = runtime

    def key(self, code: str) -> str:
        """The key naming the table of a code."""
        return self.runtime.key("lobby", "code", code)

    async def make_private(self, table: LobbyTable, creator: str) -> None:
        """Mark a new table private, with its creator let in and a fresh unique code."""
        table.private = True
        table.admit(creator)
        while not table.code:
            code = new_code()
            if await self.runtime.redis.set(self.key(code), table.table_id, nx=True, ex=CODE_TTL_SECONDS):
                table.code = code

    async def table_of(self, code: str) -> str:
        """The table id of a code, else NotFound."""
        found = await self.runtime.redis.get(self.key(normal_code(code)))
        if found is None:
            raise NotFound("a private table with this code")
        return str(found.decode())
