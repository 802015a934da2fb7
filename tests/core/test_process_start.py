"""One process's start time, read twice, is the same process; another's is not."""

from pitcrew.supervisor.core.process_start import same_process, same_start


def test_a_start_time_read_a_second_apart_is_the_same_process() -> None:
    # ps lstart's 1 s resolution, or the boot time moved by a clock step between two readings
    assert same_start(1_700_000_000.0, 1_700_000_001.0)
    assert same_start(1_700_000_001.0, 1_700_000_000.2)


def test_a_start_time_minutes_apart_is_another_process() -> None:
    assert not same_start(1_700_000_000.0, 1_700_000_120.0)


def test_two_pids_are_two_processes_however_close_their_start() -> None:
    assert same_process(41, 1_700_000_000.0, 41, 1_700_000_001.0)
    assert not same_process(41, 1_700_000_000.0, 42, 1_700_000_000.0)


def test_a_reading_without_its_pid_must_match_to_the_tick() -> None:
    assert same_process(None, 1_700_000_000.0, 41, 1_700_000_000.0)
    assert not same_process(None, 1_700_000_000.0, 41, 1_700_000_001.0)
