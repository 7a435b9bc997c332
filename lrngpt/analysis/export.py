"""`lrn embed export`: a run's embedding table as TSV files (vectors.tsv, metadata.tsv with token, id,
frequency, category; lrn-export.json; the .lrn-output record), or with --format projector also the
step-0 table (vectors_init.tsv) and projector_config.pbtxt for `tensorboard --logdir DIR`. Rows are
in id order (--top N: the N most frequent in the training split).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from lrngpt.analysis.embeddings import has_categories, init_table, load_table, token_categories
from lrngpt.analysis.vocab import frequency_order, token_text, train_counts
from lrngpt.core import log as logging
from lrngpt.core.ownership import check_dir_target, owned_dir
from lrngpt.errors import UserError, option
from lrngpt.store.layout import CHECKPOINT_LABELS

FORMATS = ("tsv", "projector")
MARKER = "lrn-export.json"
# the --out it writes: a new or empty directory, or an earlier export nobody changed (replaced with or
# without force, as an earlier report is); never anything else
KIND = "embed-export"


def write_vectors(path: Path, rows: np.ndarray) -> None:
    # %.9g writes every float32 exactly (it reads back bit for bit)
    np.savetxt(path, rows.astype(np.float32), fmt="%.9g", delimiter="\t")


def export_table(run_dir, out, fmt: str = "tsv", top: int | None = None, log=None, checkpoint: str = "last") -> dict:
    """Write the files above (vectors.tsv from `checkpoint`: last, best or init); what was written, for --json."""
    if fmt not in FORMATS:
        raise UserError(f"{option('format', f'{fmt!r}')}: choose one of {', '.join(FORMATS)}")
    if top is not None and top < 1:
        raise UserError(f"{option('top', top)}: must be at least 1")
    out = Path(out)
    check_dir_target(out, False, KIND, replace_own=True)
    run, table = load_table(run_dir, checkpoint)
    rows, tok = table.shape[0], run.tokenizer
    counts, note = train_counts(run, rows, log)
    keep = np.sort(frequency_order(counts, rows)[:top]) if top else np.arange(rows)
    logging.debug(f"embedding export: {len(keep):,} of {rows:,} rows of {run.dir} (step {run.step}, {checkpoint}), "
                  f"{'counted' if counts is not None else 'no'} training counts")
    cats = token_categories(tok) if has_categories(run) else {}
    check_dir_target(out, False, KIND, replace_own=True)  # again, just before writing
    with owned_dir(out, KIND) as tmp:  # built beside --out and swapped in whole: never half an export
        write_vectors(tmp / "vectors.tsv", table.numpy()[keep])
        lines = ["token\tid\tfrequency\tcategory"]
        for i in keep.tolist():
            freq = "" if counts is None else str(int(counts[i]))
            lines.append(f"{token_text(tok, i)}\t{i}\t{freq}\t{cats.get(i, '')}")
        (tmp / "metadata.tsv").write_text("\n".join(lines) + "\n", encoding="utf-8")
        files = ["vectors.tsv", "metadata.tsv"]
        tensors = [{"name": f"{run.dir.name} {CHECKPOINT_LABELS.get(checkpoint, checkpoint)} (step {run.step})",
                    "path": "vectors.tsv"}]
        if fmt == "projector":
            # no ckpt_init.pt (an imported model): the trained table alone; a damaged one is an error
            init = init_table(run_dir) if checkpoint != "init" else None
            if init is not None:
                write_vectors(tmp / "vectors_init.tsv", init.numpy()[keep])
                tensors.append({"name": f"{run.dir.name} untrained (step 0)", "path": "vectors_init.tsv"})
                files.append("vectors_init.tsv")
            (tmp / "projector_config.pbtxt").write_text(projector_config(tensors), encoding="utf-8")
            files.append("projector_config.pbtxt")
        result = {"run": str(run_dir), "step": run.step, "checkpoint": checkpoint, "format": fmt, "out": str(out),
                  "rows": int(len(keep)), "n_embd": int(table.shape[1]), "top": top, "frequencies": note,
                  "tensors": tensors, "files": [*files, MARKER]}
        (tmp / MARKER).write_text(json.dumps(result, indent=2) + "\n")
    return result


def _quote(text: str) -> str:
    """A protobuf text-format string: backslash and quote escaped, anything unprintable replaced."""
    # once the unprintable characters are gone, JSON's string escapes are those two
    return json.dumps("".join(ch if ch.isprintable() else "?" for ch in text), ensure_ascii=False)


def projector_config(tensors: list[dict]) -> str:
    """projector_config.pbtxt (protobuf text format): one embedding per table, sharing metadata.tsv."""
    out = []
    for t in tensors:
        out += ["embeddings {", f"  tensor_name: {_quote(t['name'])}",
                f"  tensor_path: \"{t['path']}\"", "  metadata_path: \"metadata.tsv\"", "}"]
    return "\n".join(out) + "\n"
