"""The table of documented commands: every command line README.md and docs/
tell a user to type, with what test_docs_commands.py does with it.

1. COMMANDS maps a document to its command lines, each with a Disposition:
   Run (run it in the sandbox), Covered (another ctest runs it), BuiltHere,
   Synopsis, Lsp or NotRunnable (why not).
2. The constants after it say which first words and code-block languages
   make a line a command, and which install paths the package owns.
3. test_docs_commands.py extracts the commands and requires each to be here.
"""

import re


class Disposition:
    def describe(self):
        return type(self).__name__


class Run(Disposition):
    """Run in the sandbox. rc: the expected exit status. env: added to the
    environment. expect: regexes the combined output must match. files:
    paths (relative to the working directory) that must exist afterwards.
    cwd: 'project' (the sandbox project) or 'tidy-project' (a copy without
    a build dir, for a fresh configure). subst: literal replacements made
    before running (said in the log). expand: {placeholder: [values]} runs
    once per value. output: how to compare the output the doc shows
    ('lines': each documented line appears, whitespace-insensitive, `...`
    a wildcard; None: the doc shows none). varies: documented substrings
    that differ per build (a version), matched as any word. output_next:
    the doc's next code block after the command's is its output."""

    def __init__(self, rc=0, env=None, expect=(), files=(), cwd="project",
                 subst=None, expand=None, varies=(), output_next=False):
        self.rc, self.env, self.expect, self.files = rc, env or {}, expect, files
        self.cwd, self.subst, self.expand = cwd, subst or {}, expand or {}
        self.varies, self.output_next = varies, output_next


class Covered(Disposition):
    def __init__(self, ctest, why=""):
        self.ctest, self.why = ctest, why

    def describe(self):
        return "covered by ctest %s" % self.ctest


class BuiltHere(Disposition):
    def __init__(self, why="the build that runs this test"):
        self.why = why


class Synopsis(Disposition):
    pass


class Lsp(Disposition):
    pass


class NotRunnable(Disposition):
    def __init__(self, why):
        self.why = why

    def describe(self):
        return "not runnable here: " + self.why


SELF_BUILD = BuiltHere("builds this repository: the build that runs this test")
PACKAGE = Covered("package_deb", "scripts/package.sh --no-build, then dpkg -i into a scratch root")
CI_ITSELF = NotRunnable("the CI job's own steps (scripts/test.sh: install-deps, build, ctest)")
SHARDS = {"${{ matrix.shard }}": ["1", "2", "3", "4"]}
CONTIGUOUS_FINDING = r"contiguous\(\) copies .*\[torch-contiguous-copy\]"

# doc -> {command as the doc writes it (continuations joined, comments and
# `$ ` dropped, whitespace collapsed): what the test does with it}
COMMANDS = {
    "README.md": {
        "tensor-accountant testdata/seed/blocks.cpp": Run(),
        "bash scripts/run-seed.sh": NotRunnable(
            "apt-get and a build into build/; it ends with README's seed command, run here"),
        "bash scripts/test.sh": CI_ITSELF,
        "bash scripts/package.sh": PACKAGE,
        "sudo apt install ./build/package/tensor-accountant_*_amd64.deb": PACKAGE,
        "tensor-accountant --version": Run(expect=[r"^tensor-accountant \S+"]),
        "tensor-accountant --cuda-available=no testdata/training/tutorial.cpp": Run(output_next=True),
        "tensor-accountant path/to/model.cpp": Run(expect=[CONTIGUOUS_FINDING]),
        "tensor-accountant [options] <file>... [-- <compiler flags>]": Synopsis(),
        "tensor-accountant -p <build dir> [options] [<file>...]": Synopsis(),
        "clang-tidy-16 --load=build/checks/plugin/libTensorAccountantTidyModule.so "
        "-checks='-*,torch-*' model.cpp -- -std=c++17 -isystem /usr/include/torch/csrc/api/include":
            Run(expect=[CONTIGUOUS_FINDING]),
    },
    "docs/cuda.md": {
        "tensor-accountant testdata/cuda/launchers.cu": Covered(
            "driver_cuda", "runs it in the source tree and checks the rows the doc shows"),
        "tensor-accountant -p build": Covered(
            "driver_cuda", "-p over a compile database written by nvcc, with a .cu entry"),
    },
    "docs/clang-tidy-plugin.md": {
        "clang-tidy-16 --load=/usr/lib/tensor-accountant/clang-tidy-16/libTensorAccountantTidyModule.so "
        "-checks='-*,torch-*' src/model.cpp -- -std=c++17 -isystem/usr/include/torch/csrc/api/include":
            Run(expect=[CONTIGUOUS_FINDING]),
        "cmake -S . -B build -G Ninja": SELF_BUILD,
        "ninja -C build TensorAccountantTidyModule": SELF_BUILD,
        "clang-tidy-16 --load=build/checks/plugin/libTensorAccountantTidyModule.so "
        "-checks='-*,torch-*' src/model.cpp -- -std=c++17 -isystem/usr/include/torch/csrc/api/include":
            Run(expect=[CONTIGUOUS_FINDING]),
        "clang-tidy-16 --load=build/checks/plugin/libTensorAccountantTidyModule.so "
        "-checks='-*,torch-*' -p build src/model.cpp": Run(expect=[CONTIGUOUS_FINDING]),
    },
    "docs/html-report.md": {
        "tensor-accountant --format=html model.cpp > memory.html": Run(files=["memory.html"]),
        "tensor-accountant --html-out=memory.html model.cpp": Run(files=["memory.html"]),
        "tensor-accountant --html-out=- model.cpp > memory.html": Run(files=["memory.html"]),
        'tensor-accountant -p build --format=markdown --html-out=memory.html --html-url="$ARTIFACT_URL"':
            Run(env={"ARTIFACT_URL": "https://ci.example/artifacts/memory.html"},
                expect=[r"https://ci\.example/artifacts/memory\.html"], files=["memory.html"]),
    },
    "docs/ci-github-actions.yml": {
        "apt-get update": NotRunnable("a GitHub job's container setup (apt-get as root)"),
        "apt-get install -y --no-install-recommends git ca-certificates curl jq":
            NotRunnable("a GitHub job's container setup (apt-get as root)"),
        "uses: tensor-accountant/tensor-accountant@v0.1.0": Covered("integrations_action"),
    },
    "docs/install.md": {
        "bash scripts/install-deps.sh": CI_ITSELF,
        "bash scripts/package.sh": PACKAGE,
        "sudo apt install ./build/package/tensor-accountant_*_amd64.deb": PACKAGE,
        "tensor-accountant --version": Run(varies=["0.1.0~git14.g1a2b3c4d5e6f"]),
        "cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DBUILD_TESTING=OFF": SELF_BUILD,
        "cmake --build build": SELF_BUILD,
        # Run by the sandbox's setup: it is the install every other command uses.
        "sudo cmake --install build --prefix /usr/local": BuiltHere(
            "the sandbox's install: run first, into the sandbox, from this build tree"),
    },
    "docs/integrations/ci.md": {
        "apt-get update && apt-get install -y --no-install-recommends git ca-certificates curl jq":
            NotRunnable("a GitHub job's container setup (apt-get as root)"),
        "uses: tensor-accountant/tensor-accountant@v0.1.0": Covered("integrations_action"),
    },
    "docs/integrations/editors.md": {
        "tensor-accountant --lsp": Lsp(),
        "clang-tidy-16 --load=build/checks/plugin/libTensorAccountantTidyModule.so "
        "--checks='-*,torch-*' -p build src/model.cpp": Run(expect=[CONTIGUOUS_FINDING]),
    },
    "docs/integrations/pre-commit.md": {
        "pre-commit hook tensor-accountant --changed-lines-only=staged --fail-on=error "
        "--warnings-as-errors=torch-contiguous-copy": Covered("integrations_precommit"),
        "cp /usr/share/tensor-accountant/git-hooks/pre-commit .git/hooks/pre-commit":
            Run(files=[".git/hooks/pre-commit"]),
        "chmod +x .git/hooks/pre-commit": Run(),
        "git config tensor-accountant.path /path/to/tensor-accountant": Run(),
    },
    "docs/integrations/repository.md": {
        "tensor-accountant -p build/ -j 8": Run(expect=[CONTIGUOUS_FINDING]),
        "tensor-accountant -p build/ --files-from=changed.txt": Run(expect=[CONTIGUOUS_FINDING]),
        "git diff --name-only origin/main -- '*.cpp' | tensor-accountant -p build/ --files-from=-":
            Run(expect=[CONTIGUOUS_FINDING]),
        "cmake -S . -B build -DCMAKE_EXPORT_COMPILE_COMMANDS=ON": Run(files=["build/compile_commands.json"]),
        "tensor-accountant -p build --shard ${{ matrix.shard }}/4 --format=sarif --cache-size=300M "
        "> tma-${{ matrix.shard }}.sarif": Run(expand=SHARDS, files=["tma-${{ matrix.shard }}.sarif"]),
        # The build action, for real: the configure must find the module where
        # the package installs it, and the build log must carry its finding.
        'cmake -S . -B build -G Ninja "-DCMAKE_CXX_CLANG_TIDY=clang-tidy-16;'
        '--load=/usr/lib/tensor-accountant/clang-tidy-16/libTensorAccountantTidyModule.so;'
        '--checks=-*,torch-*;--warnings-as-errors=torch-redundant-copy"':
            Run(cwd="tidy-project"),
        "cmake --build build": Run(cwd="tidy-project", expect=[CONTIGUOUS_FINDING]),
        'exec clang-tidy-16 --load="$(dirname "$0")/libTensorAccountantTidyModule.so" "$@"':
            NotRunnable("Bazel's wrapper script (no Bazel in Debian 12; the doc says untested)"),
        "bazel build --config=tidy --remote_executor=grpcs://... //...":
            NotRunnable("no Bazel in Debian 12 (the doc says untested)"),
    },
    "docs/architecture.md": {
        "scripts/add-op linalg 'outer(Tensor self, Tensor vec2) -> Tensor'":
            Covered("OpTable.add_op", "it runs add-op on a scratch copy of the tree"),
    },
    "docs/speed.md": {
        "FILES=40 JOBS=2 bench/scan.sh": NotRunnable("a benchmark: timings live in bench/, never in tests"),
        "TIDY_SAMPLE=8 COMPARE=0 bench/scan.sh": NotRunnable("a benchmark: timings live in bench/, never in tests"),
        "BEFORE=/path/to/old/tensor-accountant bench/include-blocks.sh":
            NotRunnable("a benchmark: timings live in bench/, never in tests"),
        "BEFORE=/path/to/old/tensor-accountant BLOCKS=other bench/include-blocks.sh":
            NotRunnable("a benchmark: timings live in bench/, never in tests"),
    },
    "docs/symbolic.md": {
        "tensor-accountant --assume B=16 --assume T=1024 --assume C=4096 --assume n_heads=8 split_heads.cpp":
            Run(output_next=True),
    },
    "docs/testing.md": {
        "scripts/update-snapshots.sh build": Covered("snapshots", "it rewrites what that test compares"),
        "scripts/add-check torch-<name> '<one-line summary>'":
            Covered("checks.add-check", "run on a scratch copy of the tree, the generated check compiled"),
    },
    "docs/usage.md": {
        "cd src && tensor-accountant --analysis-stats model.cpp":
            Run(varies=["/home/me/proj/build/compile_commands.json"],
                expect=[r"compile commands for 1 file from '\S*/build/compile_commands\.json'"]),
        "bash scripts/package.sh && sudo apt install ./build/package/tensor-accountant_*_amd64.deb": PACKAGE,
        "tensor-accountant path/to/model.cpp": Run(expect=[CONTIGUOUS_FINDING]),
        "bash scripts/build.sh": CI_ITSELF,
        "./build/driver/tensor-accountant path/to/model.cpp": Run(expect=[CONTIGUOUS_FINDING]),
        "tensor-accountant [options] <file>... [-- <compiler flags>]": Synopsis(),
        "tensor-accountant -p <build dir> [options] [<file>...]": Synopsis(),
        "tensor-accountant --checks='-*,torch-reshape-copy,torch-redundant-copy' "
        "--warnings-as-errors='torch-reshape-copy' --export-fixes=fixes/model.yaml -p build src/model.cpp":
            Covered("driver_tidy_flags", "run as typed in a project with -p build, then applied"),
        "clang-apply-replacements-16 fixes":
            Covered("driver_tidy_flags", "applied to a copy and compared with --fix"),
    },
    "docs/verify.md": {
        "tensor-accountant --verify[=meta|cpu|cuda] model.cpp [-- flags]": Synopsis(),
        "tensor-accountant --verify=cuda --emit-harness=out/ model.cpp":
            Run(files=["out/harness.cpp", "out/CMakeLists.txt", "out/predicted.json"]),
        "cmake -S out -B build -DCMAKE_PREFIX_PATH=/path/to/libtorch && cmake --build build":
            Covered("verify_safety", "it builds an emitted harness against LibTorch"),
        "./build/harness --mode cuda --function-timeout 60 --max-live-bytes 1073741824 > measured.json":
            NotRunnable("needs a CUDA GPU; verify_safety runs a harness on the CPU"),
        "bash scripts/device-verify-cuda.sh":
            NotRunnable("needs a CUDA GPU and a CUDA LibTorch; the allocator model's unit "
                        "tests and cuda_allocator_tests run here"),
        "tensor-accountant --compare-measured=measured.json model.cpp":
            Covered("verify_emit_and_compare", "needs a measured.json from a GPU; that test compares a checked-in one"),
    },
}

# The first word of a line that makes it a command in a block that is not
# marked as shell (output and code blocks are full of other words).
KNOWN_PROGRAMS = {
    "tensor-accountant", "clang-tidy", "clang-tidy-16", "run-clang-tidy", "clang", "clang++",
    "clang++-16", "clangd", "g++", "gcc", "c++", "cmake", "ctest", "cpack", "ninja", "make",
    "bash", "sh", "exec", "sudo", "apt", "apt-get", "dpkg", "dpkg-deb", "git", "cp", "mv", "rm",
    "ln", "chmod", "mkdir", "cd", "cat", "echo", "export", "env", "xargs", "python", "python3",
    "pip", "pip3", "pre-commit", "bazel", "man", "curl", "wget", "gh", "docker", "tar", "source",
    "code", "nvim", "emacs", "npm",
}
# Clang's and LLVM's tools, and any versioned Debian tool (g++-12).
KNOWN_PROGRAM_NAMES = r"^((clang|llvm|run-clang)[\w.+-]*|[A-Za-z][\w.+]*(-[a-z][\w.+]*)*-\d+)$"
SHELL_LANGS = {"sh", "bash", "shell", "console", "zsh"}
CODE_LANGS = {"cpp", "c++", "c", "cuda", "python", "py", "text", "diff"}
EDITOR_LANGS = {"js", "javascript", "lua", "elisp", "emacs-lisp", "lisp", "json", "jsonc"}
YAML_LANGS = {"yaml", "yml"}
CMAKE_LANGS = {"cmake"}

# Install paths the package owns: the sandbox's install answers for them.
INSTALL_PATH = re.compile(r"/usr/(?:local/)?((?:bin|lib|share/doc|share|share/man/man1)/tensor-accountant\S*)")
PLACEHOLDER_TOOL = "/path/to/tensor-accountant"
