# The book's commands. Quick start: `make html`, then `make test` (see README.md).
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
JB     := $(VENV)/bin/jupyter-book
STAMP  := $(VENV)/.installed

.PHONY: html test check chapter references lint bench screenshots pdf clean freeze

# Set-up: a project-local virtual environment with the pinned requirements and lib (-e .).
$(STAMP): requirements.txt pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -r requirements.txt
	touch $(STAMP)

# The website, strict: warnings are errors. Output: _build/html/index.html
# tools/execute.py first runs the chapters side by side (one per core) into the build's cache.
html: $(STAMP)
	$(PY) tools/execute.py
	$(JB) build . --builder html -W -n --keep-going

# The whole test suite: lint, lib's unit tests, every chapter under nbval against its
# reference outputs, the quoted figures, and the strict build of the site with its checks.
test: $(STAMP)
	$(PY) -m ruff check lib tests benchmarks tools
	$(PY) -m pytest

# Everything that concerns one chapter, book/$(CHAPTER).md: JupyterLab's form (written by
# tools/lab_compat.py), lint, nbval against its reference, the emulated CPUs, its strict page
# build, browser checks and JupyterLab walk; and the book-wide checks of the sources, which a
# new chapter's edits elsewhere (the front door, the previous chapter's Next) can break:
# every chapter's structure, budget, quoted figures and JupyterLab form.
BOOK_WIDE := test_structure or test_quoted_figures or lab_compatible
check: $(STAMP)
	@test -n "$(CHAPTER)" -a -f "book/$(CHAPTER).md" || \
	  { echo "usage: make check CHAPTER=<name>, for book/<name>.md"; exit 2; }
	$(PY) tools/lab_compat.py book/*.md
	$(PY) -m ruff check lib tests benchmarks tools
	$(PY) -m pytest -k "$(CHAPTER) or $(BOOK_WIDE)"

# A new chapter from the template, listed in _toc.yml and book/intro.md, with its reference
# outputs: make chapter NAME=softmax-temperature PART=Attention
chapter: $(STAMP)
	@test -n "$(NAME)" -a -n "$(PART)" || { echo "usage: make chapter NAME=<name> PART=<part>"; exit 2; }
	$(PY) tools/new_chapter.py "$(NAME)" "$(PART)" $(if $(TITLE),--title "$(TITLE)")
	$(MAKE) --no-print-directory references CHAPTER=$(NAME)

# Re-execute the chapters under nbval and rewrite tests/reference/ (CHAPTER=<name>: that one
# only). Cells exempt from comparison keep their stored outputs. Review the diff.
references: $(STAMP)
	$(PY) tools/lab_compat.py $(if $(CHAPTER),book/$(CHAPTER).md,book/*.md)
	$(PY) -m pytest $(if $(CHAPTER),book/$(CHAPTER).md,book) --regen-references -q -n 0

# The print edition, one PDF of the whole book: _build/latex/attention-notes.pdf
# Needs LaTeX from Debian (xelatex, the engine sphinx-jupyterbook-latex selects):
#   apt-get install -y texlive-xetex texlive-latex-extra texlive-fonts-recommended \
#     texlive-plain-generic latexmk fonts-freefont-otf fonts-dejavu-core xindy
TEX_PACKAGES := texlive-xetex texlive-latex-extra texlive-fonts-recommended texlive-plain-generic \
	latexmk fonts-freefont-otf fonts-dejavu-core xindy
pdf: $(STAMP)
	@command -v xelatex >/dev/null && command -v latexmk >/dev/null || \
	  { echo "make pdf needs LaTeX: apt-get install -y $(TEX_PACKAGES)"; exit 1; }
	$(JB) build . --builder pdflatex

lint: $(STAMP)
	$(PY) -m ruff check lib tests benchmarks tools

clean:
	rm -rf _build

freeze: $(STAMP)
	{ echo "# Pinned environment for the site, the notebooks, the tests and Binder."; \
	  echo "# Regenerate with: make freeze  (then review the diff)."; \
	  echo "# jsonschema stays below 4.25: from 4.25 on, with rfc3987-syntax, every Jupyter process"; \
	  echo "# (server, kernel manager, nbval, the build) builds a Lark grammar at import: 0.7 s each."; \
	  $(PY) -m pip freeze --exclude-editable; echo "-e ."; } > requirements.txt

# Benchmarks: prints a table with targets, writes benchmarks/results.json.
# BENCH_ARGS=--quick for a smoke run; --skip-tests leaves out the test suite.
bench: $(STAMP)
	$(PY) benchmarks/run.py $(BENCH_ARGS)

# Screenshots to look at (the suite writes none): every page's first screen at 1280 px, dark
# and at 390 px, and its controls; each chapter in JupyterLab. Into tests/artifacts/.
screenshots: $(STAMP)
	SCREENSHOTS=1 $(PY) -m pytest tests/test_browser.py tests/test_jupyterlab.py -q \
	  -k "test_page_in_browser or test_page_on_a_phone or test_chapter_in_jupyterlab"
