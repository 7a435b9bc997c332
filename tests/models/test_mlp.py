"""The chapter's MLP LM: parameter counts, no leak from the future, loss, gradients."""

from __future__ import annotations

import math

import pytest
import torch
import torch.nn.functional as F

from lrngpt.analysis.costs import mlp_params
from lrngpt.errors import UserError
from lrngpt.models.mlp import MLPLM, MLPConfig

CHAPTER = {4: 2_130_432, 8: 2_159_104, 16: 2_216_448, 32: 2_331_136, 64: 2_560_512,
           128: 3_019_264, 256: 3_936_768, 512: 5_771_776}


@pytest.mark.parametrize("d,total", CHAPTER.items())
def test_parameter_count_equals_the_chapter_table(d, total):
    with torch.device("meta"):
        model = MLPLM(MLPConfig(vocab_size=4096, pad_id=0, block_size=6, n_embd=d, n_hidden=512))
    p = model.param_breakdown()
    assert p["total"] == total == mlp_params(4096, 6, 512, d)["total"]
    assert p["embedding"] == 4096 * d and p["output"] == 2_101_248 and p["hidden"] == 6 * d * 512 + 512


def tiny(block=3, seed=0):
    torch.manual_seed(seed)
    return MLPLM(MLPConfig(vocab_size=50, pad_id=0, block_size=block, n_embd=8, n_hidden=16))


def test_changing_later_tokens_leaves_earlier_logits_unchanged():
    model = tiny()
    x = torch.randint(1, 50, (2, 12))
    logits, _ = model(x)
    for t in range(11):
        y = x.clone()
        y[:, t + 1 :] = torch.randint(1, 50, y[:, t + 1 :].shape)
        assert torch.equal(model(y)[0][:, : t + 1], logits[:, : t + 1])


def test_context_is_exactly_the_last_block_tokens_padded_with_pad_id():
    model = tiny(block=3)
    x = torch.tensor([[5, 6, 7, 8, 9]])
    logits, _ = model(x)
    # position 1 sees (pad, 5, 6); position 4 sees (7, 8, 9) — computed by hand
    for t, ctx in ((1, [0, 5, 6]), (4, [7, 8, 9])):
        e = model.wte(torch.tensor(ctx)).flatten()
        hand = model.head(torch.tanh(model.hidden(e)))
        assert torch.allclose(logits[0, t], hand, atol=1e-6)


def test_loss_equals_an_independent_log_softmax_nll():
    model = tiny()
    x = torch.randint(0, 50, (3, 10))
    y = torch.randint(0, 50, (3, 10))
    y[0, 0] = -1  # ignored target
    logits, loss = model(x, y)
    logp = torch.log_softmax(logits.double(), -1)
    mask = y >= 0
    nll = -logp[mask].gather(-1, y[mask].unsqueeze(-1)).mean()
    assert math.isclose(loss.item(), nll.item(), rel_tol=1e-6)


def test_gradient_reaches_exactly_the_rows_used_and_repeated_ids_add_up():
    model = tiny(block=2)
    x = torch.tensor([[7, 7, 3]])  # contexts: (0,7) (7,7) (7,3): rows 0, 3, 7
    logits, _ = model(x)
    logits.sum().backward()
    g = model.wte.weight.grad
    used = {i for i in range(50) if g[i].abs().sum() > 0}
    assert used == {0, 3, 7}
    # the lookup's backward sums the upstream gradient of every slot that read row 7
    emb = model.wte.weight.detach().clone().requires_grad_(True)
    padded = F.pad(x, (1, 0), value=0)
    ctx = emb[padded].unfold(1, 2, 1).transpose(2, 3).flatten(2)
    model.head(torch.tanh(model.hidden(ctx))).sum().backward()
    assert torch.allclose(emb.grad, g, atol=1e-6)


def test_bad_sizes_are_user_errors():
    with pytest.raises(UserError, match="block_size"):
        MLPConfig(vocab_size=10, pad_id=0, block_size=0)
    with pytest.raises(UserError, match="pad_id"):
        MLPConfig(vocab_size=10, pad_id=10)
