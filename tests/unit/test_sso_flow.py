"""The cookie that carries a single sign-on from the provider back: it opens only unchanged, with the
same secret, and only until it expires."""

from __future__ import annotations

from sleuth.accounts.sso_flow import FLOW_TTL_S, Flow, FlowSeal
from sleuth_testkit.clock import ManualClock

FLOW = Flow(state="s", nonce="n", code_verifier="v")


def test_a_sealed_flow_opens_until_it_expires() -> None:
    clock = ManualClock()
    seal = FlowSeal("client secret", wall=clock.now)
    sealed = seal.seal(FLOW)
    assert seal.open(sealed) == FLOW
    clock.t += FLOW_TTL_S - 1
    assert seal.open(sealed) == FLOW
    clock.t += 1
    assert seal.open(sealed) is None


def test_a_changed_or_foreign_cookie_does_not_open() -> None:
    clock = ManualClock()
    sealed = FlowSeal("client secret", wall=clock.now).seal(FLOW)
    assert FlowSeal("another secret", wall=clock.now).open(sealed) is None
    payload, _, mac = sealed.partition(".")
    seal = FlowSeal("client secret", wall=clock.now)
    assert seal.open(payload[:-2] + "xx." + mac) is None
    assert seal.open(payload) is None and seal.open("") is None and seal.open("é.é") is None
