"""Token text with escaped bytes, and `lrn tokenizer show` both ways, on a run and on an imported GPT-2."""

from __future__ import annotations

import json

import pytest

from lrngpt.analysis.vocab import escape_bytes, show_tokens, token_text
from lrngpt.cli.main import main
from lrngpt.errors import UserError
from lrngpt.tokenizer.bpe import Tokenizer

DOCS = ["Lily saw a red cat in the park.", "Tom and Lily played ball.", "été, naïve — “quoted”"] * 30


@pytest.fixture(scope="module")
def tok():
    return Tokenizer.train(DOCS, 300)


@pytest.mark.parametrize("raw, text", [
    (b" Lily", " Lily"),
    ("été".encode(), "été"),
    (b"\xe2\x80", "\\xe2\\x80"),  # two bytes of a three-byte character: not text on their own
    (b"a\tb\nc\rd", "a\\tb\\nc\\rd"),
    (b"back\\slash", "back\\\\slash"),
    (b"\x00\x7f", "\\x00\\x7f"),
    ("\u00a0x\u200b".encode(), "\\xa0x\\u200b"),  # no-break and zero-width space: not printable
])
def test_escape_bytes_keeps_readable_text_and_escapes_the_rest(raw, text):
    assert escape_bytes(raw) == text
    assert "\t" not in escape_bytes(raw) and "\n" not in escape_bytes(raw)


def test_token_text_of_every_id_is_its_bytes_escaped(tok):
    texts = [token_text(tok, i) for i in range(tok.vocab_size)]
    assert texts[tok.eot_id] == "<|endoftext|>"
    singles = [i for i in range(tok.vocab_size) if len(tok.decode_bytes([i])) == 1 and tok.decode_bytes([i])[0] >= 0x80]
    assert singles and all(texts[i] == f"\\x{tok.decode_bytes([i])[0]:02x}" for i in singles)
    assert token_text(tok, tok.vocab_size + 3) == f"<unused:{tok.vocab_size + 3}>"


def test_show_looks_up_ids_and_texts(tok):
    lily = tok.encode(" Lily")
    assert len(lily) == 1
    r = show_tokens(tok, [str(lily[0]), " Lily", "Lilyxyzzy", str(tok.eot_id)])
    assert r[0] == {"query": str(lily[0]), "kind": "id", "id": lily[0], "token": " Lily", "bytes_hex": "204c696c79",
                    "special": False}
    assert r[1] == {"query": " Lily", "kind": "text", "ids": lily, "tokens": [" Lily"]}
    ids = tok.encode("Lilyxyzzy")
    assert r[2]["ids"] == ids and len(ids) > 1 and "".join(r[2]["tokens"]) == "Lilyxyzzy"
    assert r[3]["token"] == "<|endoftext|>" and r[3]["special"] is True
    digits = show_tokens(tok, ["2024"], as_text=True)[0]
    assert digits["kind"] == "text" and digits["ids"] == tok.encode("2024")


def test_show_refuses_an_id_outside_the_vocabulary_and_empty_text(tok):
    with pytest.raises(UserError, match="outside the vocabulary.*--text"):
        show_tokens(tok, [str(tok.vocab_size)])
    with pytest.raises(UserError, match="empty"):
        show_tokens(tok, [""])


def test_cli_show_prints_text_and_json_for_a_tokenizer_directory(tok, tmp_path, capsys):
    tok.save(tmp_path / "tokenizer.json")
    i = tok.encode(" Lily")[0]
    assert main(["tokenizer", "show", str(tmp_path), str(i), " Lily"]) == 0
    assert capsys.readouterr().out.splitlines() == [f"{i} -> ' Lily'  bytes 20 4c 69 6c 79", f"' Lily' -> {i}  (' Lily')"]
    assert main(["tokenizer", "show", str(tmp_path / "tokenizer.json"), "été", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["vocab_size"] == tok.vocab_size and doc["results"][0]["ids"] == tok.encode("été")
    assert main(["tokenizer", "show", str(tmp_path), "99999"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "outside the vocabulary" in err[0]
    assert main(["tokenizer", "show", str(tmp_path / "nope"), "1"]) == 2
    assert "no tokenizer" in capsys.readouterr().err


def test_cli_show_works_on_an_imported_gpt2_run(tok, tmp_path, capsys):
    transformers = pytest.importorskip("transformers")
    pytest.importorskip("safetensors")
    import torch

    from lrngpt.interop.gpt2 import convert_gpt2

    torch.manual_seed(0)
    config = transformers.GPT2Config(vocab_size=tok.vocab_size, n_positions=32, n_embd=16, n_layer=1, n_head=2,
                                     bos_token_id=tok.eot_id, eos_token_id=tok.eot_id)
    hf = tmp_path / "hf"
    transformers.GPT2LMHeadModel(config).save_pretrained(hf)
    tok.save(hf / "tokenizer.json")
    convert_gpt2(hf, tmp_path / "run")
    i = tok.encode(" Lily")[0]
    assert main(["tokenizer", "show", str(tmp_path / "run"), str(i), " Lily saw", "--json"]) == 0
    r = json.loads(capsys.readouterr().out)["results"]
    assert r[0]["token"] == " Lily" and r[1]["ids"] == tok.encode(" Lily saw") and r[1]["ids"][0] == i
