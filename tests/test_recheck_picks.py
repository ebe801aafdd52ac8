"""Which timed calls a batch rechecks, decided after each call (fastkernels/recheck_picks.py): exact counts, one pick
per capture class where asked, every call equally likely, and nothing decided ahead of its call."""

from __future__ import annotations

from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fastkernels.recheck_picks import OnlinePicks


@given(count=st.integers(1, 120), data=st.data())
@settings(max_examples=80, deadline=None)
def test_a_batch_gets_exactly_its_picks_and_one_in_every_class(count, data):
    classes = data.draw(st.integers(0, min(12, count)))
    wanted = data.draw(st.integers(classes, count))
    picks = OnlinePicks(count, wanted, classes)
    decided = [index for index in range(count) if picks.decide(index)]
    assert len(decided) == wanted and picks.picked == decided
    if classes:
        assert Counter(index % classes for index in decided).keys() >= set(range(classes))


def test_a_pick_is_only_ever_known_after_its_call():
    picks = OnlinePicks(50, 5)
    for index in range(50):
        assert all(done < index for done in picks.picked)
        picks.decide(index)
    assert len(picks.picked) == 5


def test_every_call_is_as_likely_to_be_picked_with_classes_and_without():
    # 6000 batches of 12 calls: each call's share is 3/12 without classes; with 4 classes of 3 calls (one pick each)
    # and 2 more of the other 8 calls, each call's share is 1/3 + 2/3 * 2/8 = 1/2
    for classes, wanted, share in ((0, 3, 0.25), (4, 6, 0.5)):
        hits = Counter()
        for _ in range(6000):
            picks = OnlinePicks(12, wanted, classes)
            hits.update(index for index in range(12) if picks.decide(index))
        assert all(abs(hits[index] / 6000 - share) < 0.035 for index in range(12)), (classes, sorted(hits.items()))


def test_a_call_out_of_order_is_never_picked_so_the_count_falls_short():
    # code that restarts a batch behind the harness's back, or skips calls, leaves fewer rechecks than asked for
    picks = OnlinePicks(4, 4)
    assert picks.decide(0) and not picks.decide(2) and not picks.decide(0)
    assert picks.picked == [0]


def test_more_picks_than_calls_is_refused():
    with pytest.raises(ValueError, match="5 picks of 4 calls"):
        OnlinePicks(4, 5)
