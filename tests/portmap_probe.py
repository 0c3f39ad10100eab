"""Run by tests/test_portmap_router.py inside a namespace, as a host would: listen on a TCP port
(the first argument, if given; else a free one), ask the router to map it (``hold_mapping``),
and print one JSON line: the port it listens on ("listening"), the result's kind ("Mapped" or
"NotMapped") and fields, and the seconds it took. Then, if mapped, greet each connection with
``GREETING`` until interrupted (SIGINT, as Ctrl-C), print "stopped" once the mapping is
deleted, and exit 0. A lost mapping is printed as "lost: ..."."""

from __future__ import annotations

import dataclasses
import json
import sys
from functools import partial

import trio

from p2pwhist.reach.portmap import NotMapped, hold_mapping

GREETING = b"p2pwhist here\n"


async def _greet(stream: trio.SocketStream) -> None:
    with trio.move_on_after(5):
        await stream.send_all(GREETING)
    await stream.aclose()


async def main() -> None:
    listeners = await trio.open_tcp_listeners(int(sys.argv[1]) if len(sys.argv) > 1 else 0, host="0.0.0.0")
    port = listeners[0].socket.getsockname()[1]
    async with trio.open_nursery() as nursery:
        nursery.start_soon(trio.serve_listeners, _greet, listeners)
        started = trio.current_time()
        result = await nursery.start(partial(hold_mapping, port, lost=lambda line: print(f"lost: {line}", flush=True)))
        print(json.dumps({"listening": port, "seconds": round(trio.current_time() - started, 3),
                          "kind": type(result).__name__, **dataclasses.asdict(result)}), flush=True)
        if isinstance(result, NotMapped):
            nursery.cancel_scope.cancel()


if __name__ == "__main__":
    try:
        trio.run(main)
    except* KeyboardInterrupt:
        pass  # raised once the nursery has ended, so after hold_mapping deleted the mapping
    print("stopped", flush=True)
