# Two commands a new user needs: `make demo` and `make test`. Both create .venv on first use.
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed
# What pip is given to install torch, the one place to choose it. Only used when the venv has no
# torch: a torch you put there yourself is left alone. From PyPI on Linux x86_64 this is the CUDA
# build (gigabytes); the CPU build: make TORCH="torch==2.13.0 --index-url https://download.pytorch.org/whl/cpu"
# (docs/how-to/install.md: Linux, macOS, Windows). A pip that is set up with a local index holding a
# CPU build, as CI's is, installs that one from the plain default.
TORCH  ?= torch==2.13.0

.PHONY: setup browser demo test lint docs bench clean

# editable_mode=compat: the install is a path (a .pth line), which mypy and pyright follow from any
# folder; setuptools' default editable finder is an import hook that type checkers cannot read.
$(STAMP): pyproject.toml
	test -x $(PY) || python3 -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -c "import torch" 2>/dev/null || { echo "installing torch: pip install $(TORCH) (from PyPI on Linux: the CUDA build," \
	  "gigabytes; the CPU build: make TORCH=\"torch==2.13.0 --index-url https://download.pytorch.org/whl/cpu\")"; \
	  $(PY) -m pip install -q $(TORCH); }
	$(PY) -m pip install -q -e ".[dev,notebook,gpt2,tensorboard,wandb,mlflow,yaml,completion,parquet,hf,maps]" \
	  --config-settings editable_mode=compat
	touch $(STAMP)

setup: $(STAMP)

demo: setup
	$(VENV)/bin/lrn demo

# The report and explorer tests run headless Chromium (Debian's package; Playwright, from the
# dev extra, drives it and never downloads a browser). Installed when we may (root, as in CI);
# elsewhere the browser tests skip and say so.
browser:
	@command -v chromium >/dev/null 2>&1 || { [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null && \
	  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium chromium-driver >/dev/null); } || \
	  echo "note: no chromium; the browser tests will be skipped"

# The suite runs in one worker per core (pytest-xdist), each test file kept in one worker so its
# module fixtures (a trained run, a finished sweep) are made once. Most tests are single-threaded
# (tiny models, subprocesses), so two workers keep CI's two cores busy.
test: setup browser
	$(VENV)/bin/ruff check lrngpt tests benchmarks
	$(VENV)/bin/pytest -q -n auto --dist loadfile

lint: setup
	$(VENV)/bin/ruff check lrngpt tests benchmarks

# The documentation site, strictly (a broken link or reference fails) and offline; the suite builds it too
docs: setup
	$(VENV)/bin/mkdocs build --strict

bench: setup
	$(PY) benchmarks/bench_tokenizer.py
	$(PY) benchmarks/bench_train.py

clean:
	rm -rf $(VENV) runs site .pytest_cache
