# Runs moto_server with S3 object writes serialized.
#
# moto checks a conditional write (If-None-Match: *, If-Match) and then
# writes, in two steps, on a threaded server: two racing lock writes can both
# succeed. Real S3 checks and writes in one step. Holding one lock around
# every object write and delete makes moto behave like S3, so that a test of
# infra's S3 lock shows what the lock does, not the emulator's race.
#
# Arguments are moto_server's (-H HOST -p PORT). internal/moto writes this
# file next to the server's log and runs it with moto's own interpreter.
import sys
import threading

from moto.s3.responses import S3Response
from moto.server import main

_object_writes = threading.Lock()


def _serialized(method):
    def wrapper(self, *args, **kwargs):
        with _object_writes:
            return method(self, *args, **kwargs)

    wrapper.__name__ = method.__name__
    wrapper.__doc__ = method.__doc__
    return wrapper


S3Response.put_object = _serialized(S3Response.put_object)
S3Response.delete_object = _serialized(S3Response.delete_object)

if __name__ == "__main__":
    sys.argv[0] = "moto_server"
    sys.exit(main(sys.argv[1:]))
