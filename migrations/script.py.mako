"""${message}

Revision ID: ${up_revision}
Revises: ${down_revision | comma,n}
Create Date: ${create_date}

Reviewed by hand: check constraint names (naming convention in app/registry/orm.py),
server defaults, SQLite batch mode, and that downgrade() exactly undoes upgrade().
"""

from __future__ import annotations
% if branch_labels or depends_on:

from collections.abc import Sequence
% endif

import sqlalchemy as sa
from alembic import op
${imports if imports else ""}

revision: str = ${repr(up_revision)}
down_revision: str | None = ${repr(down_revision)}
% if branch_labels or depends_on:
branch_labels: str | Sequence[str] | None = ${repr(branch_labels)}
depends_on: str | Sequence[str] | None = ${repr(depends_on)}
% endif


def upgrade() -> None:
    ${upgrades if upgrades else "pass"}


def downgrade() -> None:
    ${downgrades if downgrades else "pass"}
