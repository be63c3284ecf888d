"""Definition errors point at the user's line: the ``class Keys`` entry, the field or the
pattern at fault (``error.location``, a note under the traceback, the CLI's message), and
unknown names get a did-you-mean."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from datetime import datetime
from pathlib import Path
from typing import Annotated

import pytest

from singletable import GSI, Entity, Index, Repository, Shard, Table, Version, query
from singletable.errors import KeyDefinitionError, ModelDefinitionError

HERE = Path(__file__)
shop = Table("Shop", indexes=[GSI("GSI1", pk="GSI1PK", sk="GSI1SK")])


def line_of(text: str) -> str:
    """``path:line`` of the one line of this file that ends with ``text``."""
    lines = HERE.read_text().splitlines()
    (number,) = [n for n, line in enumerate(lines, 1) if line.endswith(text)]
    return f"{HERE}:{number}"


def test_an_unknown_template_field_points_at_its_keys_entry() -> None:
    with pytest.raises(KeyDefinitionError) as info:

        class Order(Entity, table=shop):
            order_id: str
            created_at: datetime

            class Keys:
                pk = "ORDER#{order_id}"
                sk = "AT#{created_at}#{orderid}"  # site: sk

    error = info.value
    assert error.location == line_of("# site: sk")
    assert "(did you mean 'order_id'?)" in str(error)
    if sys.version_info >= (3, 11):
        assert error.__notes__ == [f"defined at {error.location}: " + _source("# site: sk")]


def test_an_index_entry_points_at_its_line() -> None:
    with pytest.raises(ModelDefinitionError) as info:

        class Order(Entity, table=shop):
            order_id: str
            status: str

            class Keys:
                pk = "ORDER#{order_id}"
                sk = "ORDER"
                GSI1 = Index("STATUS#{status}", "ORDER#{order_id}", when={"stauts": "x"})

    assert info.value.location == line_of('when={"stauts": "x"})')
    assert "(did you mean 'status'?)" in str(info.value)


def test_an_index_the_table_lacks_points_at_the_entry() -> None:
    with pytest.raises(ModelDefinitionError, match="GSI9") as info:

        class Order(Entity, table=shop):
            order_id: str

            class Keys:
                pk = "ORDER#{order_id}"
                sk = "ORDER"
                GSI9 = ("A#{order_id}", "B")  # site: GSI9

    assert info.value.location == line_of("# site: GSI9")


def test_a_field_error_points_at_the_field() -> None:
    with pytest.raises(ModelDefinitionError, match="Version") as info:

        class Order(Entity, table=shop):
            order_id: str
            version: Annotated[str, Version()] = "0"  # site: version

            class Keys:
                pk = "ORDER#{order_id}"
                sk = "ORDER"

    assert info.value.location == line_of("# site: version")


def test_a_shard_of_a_misspelt_field_suggests_the_field() -> None:
    with pytest.raises(ModelDefinitionError, match=r"did you mean 'order_id'\?") as info:

        class Order(Entity, table=shop):
            order_id: str
            shard: Annotated[int, Shard(4, of="orderid")] = 0  # site: shard

            class Keys:
                pk = "ORDER#{order_id}"
                sk = "ORDER"

    assert info.value.location == line_of("# site: shard")


def test_a_missing_pk_points_at_class_keys() -> None:
    with pytest.raises(ModelDefinitionError, match="needs pk") as info:

        class Order(Entity, table=shop):
            order_id: str

            class Keys:  # site: Keys
                sk = "ORDER"

    assert info.value.location == line_of("# site: Keys")


def test_other_errors_point_at_the_class_line() -> None:
    with pytest.raises(ModelDefinitionError, match="type=") as info:

        class Order(Entity, table=shop, type=""):  # site: class
            order_id: str

            class Keys:
                pk = "ORDER#{order_id}"
                sk = "ORDER"

    assert info.value.location == line_of("# site: class")


class Base(Entity):
    created: Annotated[str, Version()] = "0"  # site: inherited


def test_an_inherited_field_points_into_the_base_class() -> None:
    with pytest.raises(ModelDefinitionError, match="Version") as info:

        class Order(Base, table=shop):
            order_id: str

            class Keys:
                pk = "ORDER#{order_id}"
                sk = "ORDER"

    assert info.value.location == line_of("# site: inherited")


class Order(Entity, table=shop):
    order_id: str
    customer_id: str

    class Keys:
        pk = "CUSTOMER#{customer_id}"
        sk = "ORDER#{order_id}"


def test_a_pattern_error_points_at_the_pattern() -> None:
    with pytest.raises(ModelDefinitionError, match="GSI1") as info:

        class Shop(Repository, table=shop):
            orders = query(Order)
            by_status = query(Order, index="GSI1")  # site: pattern

    assert info.value.location == line_of("# site: pattern")


def test_a_class_without_source_still_raises_plainly() -> None:
    namespace: dict[str, object] = {"Entity": Entity, "shop": shop}
    code = (
        "class Order(Entity, table=shop):\n    order_id: str\n    class Keys:\n        sk = 'X'\n"
    )
    with pytest.raises(ModelDefinitionError, match="needs pk") as info:
        exec(compile(code, "<typed at a prompt>", "exec"), namespace)
    assert info.value.location is None


def test_the_cli_names_the_file_and_line(tmp_path: Path) -> None:
    (tmp_path / "bad_model.py").write_text(
        textwrap.dedent(
            """\
            from datetime import datetime
            from singletable import Entity, Table

            shop = Table("Shop")


            class Order(Entity, table=shop):
                order_id: str
                created_at: datetime

                class Keys:
                    pk = "ORDER#{order_id}"
                    sk = "AT#{created_at}#{orderid}"
            """
        )
    )
    result = subprocess.run(
        [sys.executable, "-m", "singletable", "explain", "bad_model:Shop"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 2
    assert "importing 'bad_model' failed at bad_model.py:13: KeyDefinitionError" in result.stderr
    assert "did you mean 'order_id'?" in result.stderr


def _source(marker: str) -> str:
    (line,) = [line for line in HERE.read_text().splitlines() if line.endswith(marker)]
    return line.strip()
