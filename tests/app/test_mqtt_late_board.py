"""A board that comes late catches up: three tables on a real Mosquitto play before the board
exists; the board, started afterwards with a client id the broker never saw, asks each table
for what it missed (the ``fetch`` topic) and ends with every mirror byte-equal to its table's
log.  Every wait is on a condition (the tables' acknowledged lines, the mirrors' bytes)."""

from mqtt_broker import (SimTable, broker, club_factory, describe, mirror_complete, mirror_of,  # noqa: F401
                         wait_until)

WAIT_S = 60


def test_a_board_started_after_three_tables_ends_with_every_mirror_equal(tmp_path, broker, club_factory):
    tables = [SimTable(tmp_path / f"logs-{n}", broker.url, f"t{n}", seed=n, speed=300, deals=deals,
                       close=False).start()
              for n, deals in ((1, 2), (2, 2), (3, 4))]
    try:
        for table in tables[:2]:        # two tables have played everything before the board exists
            wait_until(table.played.is_set, WAIT_S, f"table {table.table_id} to play its deals")
        for table in tables:            # ... and every table's lines so far are on the broker
            wait_until(lambda t=table: t.publisher.stats["acked"] >= 30, WAIT_S,
                       f"table {table.table_id}'s first lines acknowledged by the broker")
        club = club_factory(broker.url, client_id="a-board-the-broker-never-saw")
        wait_until(tables[2].played.is_set, WAIT_S, "table t3 to play its deals")
        for table in tables:
            wait_until(lambda t=table: t.publisher.outstanding() == 0, WAIT_S,
                       f"table {table.table_id}'s lines all acknowledged")
            mirror = mirror_of(tmp_path / "club", table.table_id, table.session.folder)
            wait_until(lambda m=mirror, t=table: mirror_complete(m, t.session.folder), WAIT_S,
                       describe(mirror, table.session.folder))
            assert (mirror / "config.toml").read_bytes() == (table.session.folder / "config.toml").read_bytes()
            assert not (mirror / "pending.jsonl").exists()
        assert not club.bad and club.fetches >= 3
        fetched = {t.table_id: t.publisher.stats["fetched"] for t in tables}
        assert all(fetched[t.table_id] >= 30 for t in tables), fetched     # each table sent its start again
    finally:
        for table in tables:
            table.stop()
