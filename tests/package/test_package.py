#!/usr/bin/env python3
"""The Debian package and `cmake --install`, end to end, on real parts.

1. scripts/package.sh packs the build tree under test (--no-build: CPack
   only packs) into a .deb.
2. Its control fields: the version is the one the binary prints; Depends
   names the Clang 16 libraries, Clang's builtin headers and the C++
   standard library headers; libtorch-dev is a Recommends, never a
   Depends; no maintainer scripts (so it installs into any root); the
   Homepage is the project's repository (TMA_REPOSITORY_URL); every
   installed path README.md and docs/ name (the module's --load= path in
   the CMAKE_CXX_CLANG_TIDY line among them) is one the package installs;
   /usr/share/doc/tensor-accountant/copyright is a 0644 file.
3. apt-get resolves its dependencies on this machine (a simulation).
4. dpkg -i into a scratch root (dpkg --root; --force-depends because that
   root's package database is empty: step 3 checks the dependencies).
5. The installed tensor-accountant: --version names the version, Clang,
   the LibTorch headers and the installed clang-tidy module; on the seed
   it prints the same table as the build tree's binary and exactly the
   seed's expected findings (tests/checks/check_torch_tidy.py), with
   SARIF help links to the checks' https pages at the release tag (pages
   the package installs too). The copyright file is DEP-5: the format
   line, upstream name, contact and Source (the repository), a Files: *
   paragraph, and a license paragraph with the license's text.
6. The installed module through the real clang-tidy-16: exactly the same
   expected findings.
7. The man page (gzipped roff from --help) documents every option.
8. dpkg -r and dpkg -P: nothing of the package is left in the root.
9. `cmake --install <build> --prefix <dir>` installs the same files as the
   package.

usage: test_package.py <source dir> <build dir> <clang-tidy-16>
"""
import gzip
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

SRC, BUILD, CLANG_TIDY = sys.argv[1:4]
SEED = os.path.join(SRC, "testdata/seed/blocks.cpp")
SEED_EXPECTED = os.path.join(SRC, "testdata/checks/seed-blocks.expected")
CHECK_RUNNER = os.path.join(SRC, "tests/checks/check_torch_tidy.py")
BUILD_TOOL = os.path.join(BUILD, "driver/tensor-accountant")
MODULE_DIR = "usr/lib/tensor-accountant/clang-tidy-16"
MODULE = MODULE_DIR + "/libTensorAccountantTidyModule.so"
COPYRIGHT = "usr/share/doc/tensor-accountant/copyright"
with open(os.path.join(SRC, "CMakeLists.txt")) as f:
    _cmake = f.read()
PROJECT_VERSION = re.search(r"project\(TensorMemoryAccountant VERSION ([0-9.]+)", _cmake).group(1)
REPOSITORY_URL = re.search(r'set\(TMA_REPOSITORY_URL "([^"]+)"', _cmake).group(1)
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)
    return cond


def run(cmd, **kw):
    print("$", " ".join(cmd), flush=True)
    return subprocess.run(cmd, capture_output=True, text=True, timeout=900, **kw)


def must(cmd, **kw):
    try:
        p = run(cmd, **kw)
    except OSError as e:
        size = os.path.getsize(cmd[0]) if os.path.exists(cmd[0]) else None
        head = open(cmd[0], "rb").read(16) if size else b""
        sys.exit("FAIL: cannot run %s (%s): %s bytes, starting %r" % (cmd[0], e, size, head))
    if p.returncode != 0:
        sys.exit("FAIL: %s exited %d:\n%s\n%s" % (" ".join(cmd), p.returncode,
                                                  p.stdout, p.stderr))
    return p


def control_field(deb, field):
    return must(["dpkg-deb", "-f", deb, field]).stdout.strip()


def depends_names(value):
    """Package names in a Depends-style field, alternatives included."""
    names = set()
    for clause in value.split(","):
        for alt in clause.split("|"):
            alt = alt.strip()
            if alt:
                names.add(re.split(r"[\s(:]", alt, 1)[0])
    return names


def documents():
    """(path, text) of README.md and every page under docs/."""
    out = [("README.md", open(os.path.join(SRC, "README.md")).read())]
    for d, _, files in os.walk(os.path.join(SRC, "docs")):
        for f in sorted(files):
            if f.endswith((".md", ".yml")):
                with open(os.path.join(d, f)) as fh:
                    out.append((os.path.relpath(os.path.join(d, f), SRC), fh.read()))
    return out


def dep5_paragraphs(text):
    """A DEP-5 file as a list of {field: value}; continuation lines joined
    with newlines (a lone '.' is an empty line), as deb822 reads them."""
    paragraphs, current, field = [], {}, None
    for line in text.split("\n"):
        if not line.strip():
            if current:
                paragraphs.append(current)
            current, field = {}, None
        elif line[0] in " \t" and field:
            current[field] += "\n" + ("" if line.strip() == "." else line.strip())
        else:
            field, _, value = line.partition(":")
            current[field] = value.strip()
    if current:
        paragraphs.append(current)
    return paragraphs


def files_under(root, skip=()):
    out = set()
    for d, dirs, files in os.walk(root):
        rel_d = os.path.relpath(d, root)
        if any(rel_d == s or rel_d.startswith(s + "/") for s in skip):
            dirs[:] = []
            continue
        for f in files:
            out.add(os.path.normpath(os.path.join(rel_d, f)))
    return out


work = tempfile.mkdtemp(prefix="tma-package-")
root = os.path.join(work, "root")
cache = os.path.join(work, "cache")
dpkg_root = ["dpkg", "--root=" + root, "--log=" + os.path.join(work, "dpkg.log")]
if os.geteuid() != 0:
    dpkg_root.append("--force-not-root")
try:
    # 1. Pack.
    p = must(["bash", os.path.join(SRC, "scripts/package.sh"), "--build-dir", BUILD,
              "--output-dir", os.path.join(work, "out"), "--no-build"])
    deb = p.stdout.strip().splitlines()[-1]
    check(os.path.isfile(deb) and deb.endswith(".deb"), "package.sh names a .deb: " + deb)

    # 2. Control fields.
    with open(os.path.join(BUILD, "generated/version.txt")) as f:
        built_version = f.read().strip()
    version = control_field(deb, "Version")
    check(version == built_version,
          "package version %r is the built version %r" % (version, built_version))
    check(re.match(r"^\d+\.\d+\.\d+([~+]git\d+\.g[0-9a-f]+)?$", version),
          "version is <project version>[~+]git<n>.g<hash>: " + version)
    check(os.path.basename(deb).startswith("tensor-accountant_%s_" % version),
          "file name carries the version: " + deb)
    depends = control_field(deb, "Depends")
    recommends = control_field(deb, "Recommends")
    for name in ("libclang-cpp16", "libllvm16", "libclang-common-16-dev",
                 "libstdc++-12-dev"):
        check(name in depends_names(depends), "Depends names %s: %s" % (name, depends))
    check("libtorch-dev" in depends_names(recommends),
          "libtorch-dev is recommended: " + recommends)
    check(not any("torch" in n for n in depends_names(depends)),
          "nothing of LibTorch is a Depends: " + depends)
    control = os.path.join(work, "control")
    must(["dpkg-deb", "-e", deb, control])
    scripts = [s for s in ("preinst", "postinst", "prerm", "postrm")
               if os.path.exists(os.path.join(control, s))]
    check(not scripts, "no maintainer scripts: %s" % scripts)
    listing = must(["dpkg-deb", "-c", deb]).stdout
    packaged = set()
    for line in listing.splitlines():
        path = line.split()[-1]
        if not path.endswith("/"):
            packaged.add(os.path.normpath(path))
    check(all(f.startswith("usr/") for f in packaged),
          "everything is under /usr: %s" % sorted(packaged))
    checks = must([BUILD_TOOL, "--list-checks", "--checks=*"]).stdout.split()[2:]
    check(len(checks) >= 10, "the registry lists the checks: %s" % checks)
    expected_files = {"usr/bin/tensor-accountant", MODULE,
                      "usr/share/man/man1/tensor-accountant.1.gz", COPYRIGHT,
                      "usr/share/tensor-accountant/git-hooks/pre-commit",
                      "usr/share/doc/tensor-accountant/README.md",
                      "usr/share/doc/tensor-accountant/docs/usage.md"}
    expected_files |= {"usr/share/doc/tensor-accountant/docs/checks/%s.md" % c
                       for c in checks}
    check(expected_files <= packaged,
          "package holds %s" % sorted(expected_files - packaged))

    check(control_field(deb, "Homepage") == REPOSITORY_URL,
          "Homepage is the project's repository: " + control_field(deb, "Homepage"))
    # Every installed path the docs tell users to type is one the package
    # installs (a CMAKE_CXX_CLANG_TIDY line with a module path that does not
    # exist makes clang-tidy print its --help for every translation unit).
    for rel, text in documents():
        for path in re.findall(r"/usr/(?:lib|share|bin)/[\w./+-]*tensor-accountant[\w./+-]*",
                               text):
            path = path.rstrip(".")
            if path.endswith("/") or path.endswith("_"):
                continue
            check(path.lstrip("/") in packaged or
                  any(f.startswith(path.lstrip("/") + "/") for f in packaged),
                  "%s names %s, which the package installs" % (rel, path))
    module_lines = [(rel, m) for rel, text in documents()
                    for m in re.findall(r"--load=(/usr/\S+?\.so)", text)]
    check(any(path == "/" + MODULE for _, path in module_lines) and
          all(path == "/" + MODULE for _, path in module_lines),
          "every documented --load= of an installed module is /%s: %s" % (MODULE, module_lines))

    # The copyright file (Debian policy 12.5), machine-readable (DEP-5).
    listing_modes = {line.split()[-1].lstrip("."): line.split()[0]
                     for line in listing.splitlines()}
    check(listing_modes.get("/" + COPYRIGHT) == "-rw-r--r--",
          "the copyright file is a plain 0644 file: %s" % listing_modes.get("/" + COPYRIGHT))

    # 3. The dependencies resolve on this machine.
    if shutil.which("apt-get"):
        p = run(["apt-get", "-s", "-q", "install", "--no-install-recommends", deb])
        check(p.returncode == 0 and "Inst tensor-accountant " in p.stdout,
              "apt-get resolves the dependencies:\n" + p.stdout + p.stderr)
    else:
        print("note: no apt-get; the dependency resolution is not checked")

    # 4. Install into a scratch root.
    os.makedirs(os.path.join(root, "var/lib/dpkg/info"))
    os.makedirs(os.path.join(root, "var/lib/dpkg/updates"))
    open(os.path.join(root, "var/lib/dpkg/status"), "w").close()
    must(dpkg_root + ["--force-depends", "-i", deb])
    status = must(dpkg_root + ["-s", "tensor-accountant"]).stdout
    check("Status: install ok installed" in status, "dpkg says installed:\n" + status)
    installed = files_under(root, skip=("var",))
    check(installed == packaged,
          "the root holds exactly the package's files: extra %s, missing %s"
          % (sorted(installed - packaged), sorted(packaged - installed)))
    tool = os.path.join(root, "usr/bin/tensor-accountant")
    module = os.path.join(root, MODULE)
    with open(os.path.join(root, COPYRIGHT)) as f:
        paragraphs = dep5_paragraphs(f.read())
    header = paragraphs[0] if paragraphs else {}
    check(header.get("Format") ==
          "https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/",
          "copyright's first paragraph names the DEP-5 format: %s" % header)
    check(header.get("Upstream-Name") == "tensor-accountant" and
          header.get("Source") == REPOSITORY_URL and header.get("Upstream-Contact"),
          "copyright names the upstream, its contact and the repository: %s" % header)
    files = [p for p in paragraphs[1:] if "Files" in p]
    licenses = {p["License"].split("\n")[0].strip(): p["License"]
                for p in paragraphs[1:] if "Files" not in p and "License" in p}
    check(files and files[0]["Files"] == "*" and files[0].get("Copyright"),
          "copyright has a Files: * paragraph with a Copyright: %s" % files)
    for p in files:
        name = p.get("License", "").split("\n")[0].strip()
        check(name and (name in licenses or "\n" in p["License"]),
              "License %r of Files %s has its text in a paragraph" % (name, p.get("Files")))
    for name, text in licenses.items():
        check("\n" in text, "license paragraph %s carries the license text" % name)
        common = re.search(r"/usr/share/common-licenses/([\w.+-]+)", text)
        check(not common or common.group(1) == name,
              "license %s refers to its own common-licenses file" % name)

    # 5. The installed tool.
    p = must([tool, "--version"])
    lines = p.stdout.splitlines()
    check(lines and lines[0] == "tensor-accountant " + version,
          "--version's first line names the package version:\n" + p.stdout)
    check("Clang: built with 16." in p.stdout, "--version names Clang 16:\n" + p.stdout)
    check(re.search(r"LibTorch headers .*: \d+\.\d+", p.stdout) and
          "found as" in p.stdout, "--version names the LibTorch headers:\n" + p.stdout)
    check("clang-tidy module: " + os.path.realpath(module) in p.stdout,
          "--version names the installed module:\n" + p.stdout)

    # Every run from SRC: the preamble cache key includes the working
    # directory, so one cold parse serves all of them.
    table = must([tool, "--cache-dir", cache, SEED], cwd=SRC).stdout
    build_table = must([BUILD_TOOL, "--cache-dir", cache, SEED], cwd=SRC).stdout
    check(table == build_table and "block1" in table and "(16, 1024, 4096)" in table,
          "installed and built binaries print the same seed table:\n" + table)
    for frontend in ("cli", "clang-tidy"):
        p = run([sys.executable, CHECK_RUNNER, "--frontend", frontend, "--cli", tool,
                 "--clang-tidy", CLANG_TIDY, "--module", module, "--cache-dir", cache,
                 "--expectations", SEED_EXPECTED, SEED], cwd=SRC)
        print(p.stdout)
        check(p.returncode == 0, "installed %s reports exactly the seed's findings:\n%s%s"
              % ("tensor-accountant" if frontend == "cli" else "module in clang-tidy-16",
                 p.stdout, p.stderr))
    sarif = json.loads(must([tool, "--cache-dir", cache, "--format=sarif", SEED],
                            cwd=SRC).stdout)
    rules = sarif["runs"][0]["tool"]["driver"]["rules"]
    docs = os.path.realpath(os.path.join(root, "usr/share/doc/tensor-accountant/docs"))
    # Code scanning opens helpUri on GitHub: the check's page at the
    # release tag of the project's repository, a page the package also
    # installs.
    help_base = "%s/blob/v%s/docs/checks/" % (REPOSITORY_URL, PROJECT_VERSION)
    for rule in rules:
        uri = rule.get("helpUri", "")
        check(uri == help_base + rule["id"] + ".md" and
              os.path.isfile(os.path.join(docs, "checks", rule["id"] + ".md")),
              "SARIF helpUri is the check's https page at the release tag: " + uri)
    check(sarif["runs"][0]["tool"]["driver"]["version"] == version,
          "SARIF names the tool version")

    # 7. The man page.
    with gzip.open(os.path.join(root, "usr/share/man/man1/tensor-accountant.1.gz"),
                   "rt") as f:
        man = f.read()
    check(man.startswith(".TH TENSOR\\-ACCOUNTANT 1"), "man page header")
    help_text = must([tool, "--help"]).stdout
    for option in sorted(set(re.findall(r"^  (--?[a-z][a-z-]*)", help_text, re.M))):
        check("\\fB" + option.replace("-", "\\-") in man,
              "the man page documents %s" % option)
    for section in ("NAME", "SYNOPSIS", "DESCRIPTION", "OPTIONS", "EXIT STATUS",
                    "ENVIRONMENT"):
        check(".SH %s" % section in man, "the man page has %s" % section)

    # 8. Remove, then purge: nothing is left.
    must(dpkg_root + ["-r", "tensor-accountant"])
    left = files_under(root, skip=("var",))
    check(not left, "dpkg -r leaves no files: %s" % sorted(left))
    dirs = [d for d, _, _ in os.walk(os.path.join(root, "usr"))]
    check(not dirs, "dpkg -r leaves no directories: %s" % dirs)
    must(dpkg_root + ["-P", "tensor-accountant"])
    p = run(dpkg_root + ["-s", "tensor-accountant"])
    check(p.returncode != 0 or "install ok installed" not in p.stdout,
          "dpkg no longer knows the package:\n" + p.stdout)

    # 9. cmake --install: the same files under another prefix.
    prefix = os.path.join(work, "prefix")
    must(["cmake", "--install", BUILD, "--prefix", prefix])
    by_cmake = {"usr/" + f for f in files_under(prefix)}
    check(by_cmake == packaged, "cmake --install installs what the package holds: "
          "extra %s, missing %s" % (sorted(by_cmake - packaged),
                                    sorted(packaged - by_cmake)))
    p = must([os.path.join(prefix, "bin/tensor-accountant"), "--version"])
    check("clang-tidy module: " + os.path.realpath(
        os.path.join(prefix, "lib/tensor-accountant/clang-tidy-16")) in p.stdout,
          "a cmake --install'ed binary finds its module:\n" + p.stdout)
finally:
    # Never leave anything installed: the scratch root goes whatever happened.
    if os.path.isdir(os.path.join(root, "var/lib/dpkg")):
        run(dpkg_root + ["--force-depends", "-P", "tensor-accountant"])
    shutil.rmtree(work, ignore_errors=True)

if failures:
    sys.exit("%d failure(s)" % len(failures))
print("ok: package")
