"""The embedded broker: Kombu's filesystem transport, with messages that appear whole.

Kombu's own transport creates a message file and then writes it, so a worker polling the folder
can open it in between, read nothing, and stop on the JSON error. Here a message is written under
a name the reader skips and renamed into place: a rename within one folder is atomic.
"""

import os
import uuid
from time import monotonic

from kombu.transport import filesystem
from kombu.utils.encoding import str_to_bytes
from kombu.utils.json import dumps


class Channel(filesystem.Channel):
    def _put(self, queue, payload, **kwargs):
        name = f"{round(monotonic() * 1000)}_{uuid.uuid4()}.{queue}.msg"
        # A leading dot puts the queue name out of the reader's reach until the rename.
        partial = os.path.join(self.data_folder_out, f".{name}.partial")
        try:
            with open(partial, "wb") as f:
                f.write(str_to_bytes(dumps(payload)))
            os.replace(partial, os.path.join(self.data_folder_out, name))
        except OSError as exc:
            raise filesystem.ChannelError(f"Cannot add message {name!r} to the folder") from exc


class Transport(filesystem.Transport):
    Channel = Channel
