"""TensorBoard for train.logger: a killed run leaves event files past its checkpoint (maybe a cut last
record), which TensorBoard's loaders treat differently, so a resume rewrites them as one (`consolidate`).
"""

from __future__ import annotations

import io
import json
import os
import socket
import time
from pathlib import Path
from typing import Any

from lrngpt.core.fsio import atomic_write, user_path, writing
from lrngpt.errors import UserError
from lrngpt.store.layout import TENSORBOARD

PREFIX = "events.out.tfevents."  # TensorBoard reads the files whose names start so, in name order


def consolidate(directory: Path, resume_step: int, rows: list[tuple[int, dict[str, float]]]) -> None:
    """Rewrite `directory`'s event files as one: each scalar up to `resume_step` once (with the time it
    was written), the `rows` of metrics.jsonl (up to `resume_step`) no file held added. Other events
    go: lrn writes none but the HPARAMS tab's, which each start writes again."""
    from tensorboard.backend.event_processing.event_file_loader import LegacyEventFileLoader
    from tensorboard.compat.proto import event_pb2, summary_pb2
    from tensorboard.summary.writer.record_writer import RecordWriter

    files = sorted(p for p in directory.iterdir() if p.name.startswith(PREFIX) and ".tmp-" not in p.name)
    scalars: dict[tuple[str, int], Any] = {}  # (TensorBoard's Event protos: no types to read)
    for path in files:  # in name order, each up to a cut record
        with user_path(path, "TensorBoard event file"):  # an unreadable file names itself
            for event in LegacyEventFileLoader(str(path)).Load():
                held = event.summary.value  # (empty in an event that holds no summary)
                if len(held) == 1 and held[0].WhichOneof("value") == "simple_value" and event.step <= resume_step:
                    scalars.setdefault((held[0].tag, event.step), event)  # as add_scalar writes one
    now = time.time()
    for step, values in rows:
        for tag, value in values.items():
            if (tag, step) not in scalars:
                summary = summary_pb2.Summary(value=[summary_pb2.Summary.Value(tag=tag, simple_value=value)])
                scalars[(tag, step)] = event_pb2.Event(wall_time=now, step=step, summary=summary)
    buf = io.BytesIO()
    writer = RecordWriter(buf)
    for event in [event_pb2.Event(wall_time=now, file_version="brain.Event:2"),
                  *sorted(scalars.values(), key=lambda e: e.step)]:  # (sorted is stable: tags keep their order)
        writer.write(event.SerializeToString())
    # the first file's name keeps the place in name order; a new run's writer names a later one
    name = files[0] if files else directory / f"{PREFIX}{int(now) - 1:010d}.{socket.gethostname()}.{os.getpid()}.lrn"
    atomic_write(name, buf.getvalue())
    for old in files[1:]:
        with writing(old):
            old.unlink()


class TensorBoardSink:
    def __init__(self, run_dir: Path, resume_step: int | None, hparams: dict,
                 rows: list[tuple[int, dict[str, float]]]):
        directory = run_dir / TENSORBOARD
        if directory.exists() and not directory.is_dir():
            raise UserError(f"{directory} is a file; lrn keeps TensorBoard's event files there (train.logger "
                            "tensorboard): move the file away and run the command again")
        with writing(directory):
            directory.mkdir(exist_ok=True)
            probe = directory / f".{PREFIX}probe.tmp-{os.getpid()}"  # fails here, not in the writer's thread
            probe.write_bytes(b"")
            probe.unlink()
        if resume_step is not None:
            consolidate(directory, resume_step, rows)
        from torch.utils.tensorboard import SummaryWriter

        with writing(directory):
            self.writer = SummaryWriter(log_dir=str(directory))
        if hparams:
            from torch.utils.tensorboard.summary import hparams as hparams_summary

            # the HPARAMS tab: the swept keys of this point against its val bpb (written to this run's
            # own event file, not to the sub-directory add_hparams would make)
            file_writer = self.writer.file_writer
            assert file_writer is not None  # SummaryWriter makes it when it starts
            shown = {k: v if isinstance(v, int | float | str | bool) else json.dumps(v)  # what the tab takes
                     for k, v in hparams.items()}
            for summary in hparams_summary(shown, {"val/bpb": 0.0, "final/val_bpb": 0.0}):
                file_writer.add_summary(summary)
        self.directory = directory

    def log(self, step: int, values: dict) -> None:
        with writing(self.directory):
            for tag, value in values.items():
                self.writer.add_scalar(tag, value, step)

    def flush(self) -> None:
        with writing(self.directory):
            self.writer.flush()

    def close(self, failed: bool) -> None:
        with writing(self.directory):
            self.writer.close()
