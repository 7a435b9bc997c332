"""The book chapter on choosing the embedding width: the numbers lrn compares with and the sentences it
quotes, in one place.

QUOTES holds every sentence lrn presents as the chapter's, its (Korean) words and their English;
tests/experiments/test_chapter_quotes.py checks that each English one carries exactly the numbers of
its Korean one. Figures lrn works out from the chapter's (passes, shares read) are never inside a quote.
"""

from __future__ import annotations

import math
from typing import Any

VAL_BPB = {4: 1.1734, 8: 1.0882, 16: 1.0247, 32: 0.9751, 64: 0.9326, 128: 0.9033, 256: 0.8864, 512: 0.8795}
SEED_VAL_BPB = [0.9326, 0.9327, 0.9323]  # d = 64: seed 1337 and two more it does not name
LONG = {16: (1.0045, 1.0085), 64: (0.9200, 0.9230), 256: (0.8689, 0.8710)}  # 16,000 steps: (val, train)
TRAIN_TOKENS = 550_000_000
STEPS, BATCH, SEQ_LEN = 4000, 64, 256
READ = STEPS * BATCH * SEQ_LEN  # 65,536,000 tokens in 4,000 steps (the chapter: "6,554만", 65.54 million)
PASSES = READ / TRAIN_TOKENS  # 0.12: lrn's figure, from the chapter's
LONG_PASSES = 4 * READ / TRAIN_TOKENS  # 0.48
SECONDS = {4: 27, 8: 23, 16: 22, 32: 22, 64: 23, 128: 23, 256: 26, 512: 30}  # each 4,000-step run (its table)
LONG_SECONDS = {16: 90, 64: 88, 256: 103}  # the 16,000-step runs
# the small-data runs: the lowest periodic val bpb during training (on the first 2M validation tokens) and its
# step, and the seconds of each run (the widths whose lines it prints)
SMALL_BEST = {8: (1.1007, 4000), 64: (0.9813, 4000), 128: (0.9790, 4000), 256: (0.9981, 4000), 512: (1.0322, 3750)}
SMALL_SECONDS = {8: 26, 64: 27, 128: 27, 256: 30, 512: 36}
NEIGHBOURS = {" Lily": (" Mia", 0.95)}  # trained embedding: the cosine the chapter names (quote "lily_mia")
UNTRAINED_NEIGHBOURS = {" Luna": (" pretending", 0.48)}  # before training (quote "luna")
# Problem 10: bpb saved per million added parameters at the small end (d = 64 -> 128) against the
# large end (256 -> 512); a doubling d -> 2d adds (vocab + context x hidden) x d = 7,168 d parameters
PROBLEM10: dict[str, Any] = {"small": 64, "large": 256, "per_million": (0.0639, 0.0038), "ratio": 17}

# lrn's sentence (not a quote) where a width study reads its text more than once: the dry run, the report
PREMISE = ("the book chapter's finding on the embedding width rests on its model hardly ever reading a token "
           f"twice (it reads {READ / 1e6:.1f}M of its {TRAIN_TOKENS / 1e6:.0f}M training tokens)")
LABEL = f"book chapter: 550M training tokens, {PASSES:.2f} passes (compare the shape)"
NOTE = (f"the book chapter's val bpb (4,000 steps of 64 x 256 on its 550M-token text: {PASSES:.2f} passes), "
        "to compare the shape: bpb of different texts do not compare")

# key -> (the chapter's words, their English)
QUOTES = {
    "diminishing": ("길이를 두 배로 할 때마다 줄어드는 양이 0.0852, 0.0635, 0.0496, 0.0425, 0.0293, 0.0169, 0.0069 로 작아진다.",
                    "each time the width is doubled, the amount it saves shrinks: 0.0852, 0.0635, 0.0496, 0.0425, "
                    "0.0293, 0.0169, 0.0069"),
    "ten_times": ("가장 작은 차이 0.0069 도 씨앗에서 오는 차이보다 열 배 넘게 크다.",
                  "even the smallest difference, 0.0069, is more than ten times the difference that comes from the "
                  "seed"),
    "flat": ("곡선이 다시 올라가는 곳은 512 까지 없었지만, 256 을 지나면서 거의 평평해졌다.",
             "nowhere up to 512 did the curve rise again, but past 256 it became almost flat"),
    "gap": ("여덟 모델 모두 학습 글의 바이트당 비트가 검증 글보다 조금 높다(차이 −0.0021 에서 −0.0051).",
            "all eight models have slightly higher bits per byte on the training text than on the validation text "
            "(difference -0.0021 to -0.0051)"),
    "hardly_twice": ("학습 토큰이 5억 5천만 개인데 4,000 스텝 동안 본 토큰은 6,554만 개라, 모델은 같은 글을 두 번 볼 일이 거의 "
                     "없었다.",
                     "the training text holds 550 million tokens and in 4,000 steps it saw 65.54 million, so the "
                     "model hardly ever had occasion to read the same text twice"),
    "small": ("학습 토큰을 앞 400만 개로 줄여, 4,000 스텝 동안 같은 글을 약 16 번 되풀이해 읽게 했다.",
              "the training tokens were cut to the first 4 million, so that in 4,000 steps it read the same text "
              "about 16 times over"),
    "turns": ("이번에는 곡선이 돌아선다.", "this time the curve turns"),
    "small_val": ("검증 글의 바이트당 비트는 길이 128 에서 0.9781 로 가장 낮고, 256 에서 0.9972, 512 에서 1.0326 으로 다시 올라가 "
                  "길이 32 의 1.0030 보다도 나빠졌다.",
                  "the validation bits per byte are lowest at width 128, 0.9781, and rise again, to 0.9972 at 256 and "
                  "1.0326 at 512, worse even than width 32's 1.0030"),
    "small_train": ("학습 글의 값은 정반대로 512 까지 계속 내려가서 0.6541 이 되었다.",
                    "the training text's value does the opposite and keeps falling to 512, reaching 0.6541"),
    "seconds": ("한 번 학습에 39초니까 그냥 다 돌려 보자.", "one training run takes 39 s, so let us just run them all"),
    "problem11_train": ("학습 글만 보면 512 를 골라요. 0.6541 로 제일 낮으니까.",
                        "looking only at the training text you pick 512, because at 0.6541 it is the lowest"),
    "problem11_val": ("그럼 검증 글로 고르면 128 이네. 근데 64 도 0.9806 이라 0.0025 차이야. 파라미터는 458,752 개 적고.",
                      "so choosing by the validation text gives 128. But 64 is 0.9806, only 0.0025 apart, with "
                      "458,752 fewer parameters"),
    "fourth_root": ("우리 곡선에서 길이 8 은 바이트당 비트 1.0882 로 64 의 0.9326 보다 한참 나쁘다.",
                    "on our curve width 8, at 1.0882 bits per byte, is far worse than 64's 0.9326"),
    "train_seconds": ("학습 시간은 22초에서 30초로 별로 달라지지 않았다.",
                      "the training time hardly changed, from 22 s to 30 s"),
    "bengio": ("벤지오 팀은 100 이었잖아.", "Bengio's team used 100, didn't they?"),
    "word2vec": ("그들은 많은 연구가 길이 300 을 쓰는 것이 word2vec 첫 논문이 300 을 고른 영향일 것이라고 짚고",
                 "they point out that many studies use width 300 probably because the first word2vec paper chose "
                 "300"),
    "lily_mia": ("학습한 임베딩에서 「 Lily」와 「 Mia」의 0.95 같은 값이 뜻을 갖기 어렵다.",
                 "in the trained embedding a value such as the 0.95 of ' Lily' and ' Mia' can hardly mean anything"),
    "luna": ("학습 전 「 Luna」의 이웃 「 pretending」이 0.48 이었던 것도 이 범위 안이다.",
             "that ' Luna''s neighbour before training, ' pretending', was at 0.48 is within this range too"),
    "yardsticks": ("그들의 결과는 PIP 손실과 낱말 시험으로 잰 것이고 우리는 다음 토큰 맞히기의 검증 손실로 쟀으니, 모델도 잣대도 다르다.",
                   "their results were measured with the PIP loss and word tests, ours with the validation loss of "
                   "next-token prediction: the models and the yardsticks differ"),
    "small_gap": ("검증 글과 학습 글의 차이가 길이 8 의 0.0373 에서 512 의 0.3785 로 열 배 벌어졌다.",
                  "the difference between the validation and the training text widened tenfold, from 0.0373 at width 8 "
                  "to 0.3785 at 512"),
}


def seconds_text(seconds: dict[int, int]) -> str:
    """'27, 23, ... 30 s at d = 4, 8, ... 512': the chapter's seconds a run, by width."""
    return f"{', '.join(map(str, seconds.values()))} s at d = {', '.join(map(str, seconds))}"


def quote(key: str) -> str:
    """The chapter's sentence `key` in English, in quotation marks."""
    return f'"{QUOTES[key][1]}"'


def read_shares(passes: float) -> tuple[float, float]:
    """Expected shares of training targets read at least once and twice or more at `passes` (Poisson)."""
    return 1 - math.exp(-passes), 1 - math.exp(-passes) * (1 + passes)
