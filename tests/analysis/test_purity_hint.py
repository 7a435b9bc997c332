"""Too few category tokens (a small vocabulary splits the words) says which setting to raise."""

import pytest
import torch

from lrngpt.analysis.embeddings import category_purity
from lrngpt.errors import UserError


def test_too_few_category_tokens_says_to_raise_the_vocabulary():
    with pytest.raises(UserError, match=r"at least 2 category tokens, this vocabulary has 1.*data\.vocab_size"):
        category_purity(torch.randn(10, 4), {"a": [0]})
