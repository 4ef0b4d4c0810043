"""What a single sign-on keeps between sending the browser to the provider and its return: the
`state`, `nonce` and PKCE verifier, in a short-lived cookie signed with a key derived from the
client secret. Every server of a deployment shares that secret, so any of them can finish a
sign-in another one started; the server itself keeps nothing."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass

FLOW_TTL_S = 600  # time to sign in at the provider


@dataclass(frozen=True)
class Flow:
    state: str
    nonce: str
    code_verifier: str


class FlowSeal:
    def __init__(self, client_secret: str, *, wall: Callable[[], float] = time.time) -> None:
        self._key = hashlib.sha256(b"sleuth-oidc-flow\0" + client_secret.encode()).digest()
        self._wall = wall  # epoch seconds: another server of the deployment may open the cookie

    def seal(self, flow: Flow) -> str:
        payload = _b64(json.dumps({**asdict(flow), "exp": self._wall() + FLOW_TTL_S}, separators=(",", ":")).encode())
        return f"{payload}.{_b64(self._mac(payload))}"

    def open(self, sealed: str) -> Flow | None:
        """The flow, or None when the cookie was not made here, was changed or is too old."""
        payload, _, mac = sealed.partition(".")
        try:
            if not hmac.compare_digest(_unb64(mac), self._mac(payload)):
                return None
            values = json.loads(_unb64(payload))
            flow = Flow(str(values["state"]), str(values["nonce"]), str(values["code_verifier"]))
            expires = float(values["exp"])
        except (ValueError, KeyError, TypeError):
            return None
        return flow if self._wall() < expires else None

    def _mac(self, payload: str) -> bytes:
        return hmac.new(self._key, payload.encode(), hashlib.sha256).digest()


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
