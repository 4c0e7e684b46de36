"""The embedded broker never hands a consumer a message that is still being written."""

import multiprocessing

from kombu import Connection

TRANSPORT = "config.broker_files:Transport"
MESSAGES = 40
PAYLOAD = "x" * 20_000_000  # large enough that writing one takes a while


def _options(folder: str) -> dict:
    return {
        "data_folder_in": folder,
        "data_folder_out": folder,
        "control_folder": f"{folder}/control",
        "store_processed": False,
    }


def _produce(folder: str) -> None:
    with Connection("filesystem://localhost//", transport=TRANSPORT) as conn:
        conn.transport_options.update(_options(folder))
        queue = conn.SimpleQueue("race")
        for index in range(MESSAGES):
            queue.put({"index": index, "payload": PAYLOAD})
        queue.close()


def test_a_consumer_polling_while_messages_are_written_reads_each_whole(tmp_path):
    folder = str(tmp_path)
    producer = multiprocessing.get_context("spawn").Process(target=_produce, args=(folder,))
    producer.start()
    seen = []
    with Connection("filesystem://localhost//", transport=TRANSPORT) as conn:
        conn.transport_options.update(_options(folder))
        queue = conn.SimpleQueue("race")
        while len(seen) < MESSAGES:
            message = queue.get(timeout=60)
            assert message.payload["payload"] == PAYLOAD
            seen.append(message.payload["index"])
            message.ack()
        queue.close()
    producer.join(timeout=60)
    assert sorted(seen) == list(range(MESSAGES))
