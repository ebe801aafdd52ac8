"""The judge's ledger of timed rechecks (fastkernels/recheck_ledger.py): seeds are issued before a call, picks are
decided after it and answered once, and an output is taken only for the pick made last."""

from __future__ import annotations

from fastkernels.recheck_ledger import RecheckLedger


def test_every_call_gets_its_own_fresh_seed():
    ledger = RecheckLedger()
    ledger.start_batch(8, 0)
    seeds = [ledger.issue_seed(index) for index in range(8)]
    assert len(set(seeds)) == 8 and all(0 <= seed < 2**63 for seed in seeds)


def test_a_pick_is_decided_once_for_the_call_issued_last():
    ledger = RecheckLedger()
    ledger.start_batch(2, 2)
    seed = ledger.issue_seed(0)
    assert ledger.decide(0) and not ledger.decide(0)
    assert ledger.hand_in(0, "out-0") and not ledger.hand_in(0, "again")
    ledger.issue_seed(1)
    ledger.issue_seed(1)  # a second issue replaces the first: only its seed counts
    assert ledger.decide(1)
    assert not ledger.hand_in(0, "late")  # only the pick made last takes an output
    wanted, taken = ledger.close_batch()
    assert wanted == 2 and [(t.index, t.output) for t in taken] == [(0, "out-0")] and taken[0].seed == seed


def test_closing_a_batch_empties_the_ledger():
    ledger = RecheckLedger()
    ledger.start_batch(1, 1)
    ledger.issue_seed(0)
    assert ledger.decide(0) and ledger.hand_in(0, "out")
    assert len(ledger.close_batch()[1]) == 1
    assert ledger.close_batch() == (0, []) and not ledger.decide(0)
