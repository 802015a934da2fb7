"""A remote agent is gone only when the host's process listing says so: its start time, read
by another `ps` call a second later (1 s resolution; a stepped clock moves the boot time), is
still the same process."""

from pitcrew.supervisor.adapters.remote_procs import RemoteExits, parse_ps

LISTING = ("  4242   100  4242  4242 Sl+  Thu Dec  3 16:24:{sec} 2026 fakeagent "
           "python3 /opt/fakeagent\n")


def listing(sec: str) -> str:
    return LISTING.format(sec=sec)


def test_an_agent_whose_start_time_reads_a_second_later_is_not_gone() -> None:
    first = parse_ps(listing("57"))[4242]
    exits = RemoteExits()
    exits.watch(4242, "gpu1:work:%1", first.started)
    assert list(exits.check(parse_ps(listing("58")))) == []
    assert exits.watched() == {4242}


def test_an_agent_missing_from_the_listing_or_started_minutes_apart_is_gone() -> None:
    first = parse_ps(listing("57"))[4242]
    exits = RemoteExits()
    exits.watch(4242, "gpu1:work:%1", first.started - 600)       # the pid, used again
    assert list(exits.check(parse_ps(listing("57")))) == [("gpu1:work:%1", 4242)]
    exits.watch(4242, "gpu1:work:%1", first.started)
    assert list(exits.check({})) == [("gpu1:work:%1", 4242)]
