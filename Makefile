# Two commands a new user needs: `make demo` and `make test`. Both create .venv on first use.
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed
# CPU build of torch. Only installed when the venv has no torch: a torch you put there yourself
# (a CUDA build, say) is left alone.
TORCH  ?= torch==2.13.0

.PHONY: setup demo test lint bench clean

$(STAMP): pyproject.toml
	test -x $(PY) || python3 -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -c "import torch" 2>/dev/null || $(PY) -m pip install -q "$(TORCH)"
	$(PY) -m pip install -q -e ".[dev]"
	touch $(STAMP)

setup: $(STAMP)

demo: setup
	$(VENV)/bin/lrn demo

test: setup
	$(VENV)/bin/ruff check lrngpt tests benchmarks
	$(VENV)/bin/pytest -q

lint: setup
	$(VENV)/bin/ruff check lrngpt tests benchmarks

bench: setup
	$(PY) benchmarks/bench_tokenizer.py
	$(PY) benchmarks/bench_train.py

clean:
	rm -rf $(VENV) runs .pytest_cache
