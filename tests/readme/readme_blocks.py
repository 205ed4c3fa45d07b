#!/usr/bin/env python3
"""Every fenced code block of README.md is run, or checked, by a test (CTest readme_blocks).

Usage: readme_blocks.py REPO QUICKSTART_CPP QUICKSTART_BIN GLTRAIN_CLI WORKDIR

- "## Set up, run, test": each line is `bash scripts/<name>.sh`, the script exists, and
  .ci/run (CI) runs the test command.
- "## JavaScript quick start": its js and html blocks are the four that
  tests/web/package.test.mjs copies out of README and runs in headless Chromium
  (scripts/test.sh's JavaScript stage); here only that they are there.
- "## C++ quick start": the block is the source the build compiled (QUICKSTART_CPP,
  tests/readme/extract_cpp.cmake); QUICKSTART_BIN runs and prints the test accuracy.
- "## Command line quick start": run as written with `gltrain` on PATH, in WORKDIR
  beside a link to the repository's examples/.
Any other block fails the test: README shows no code that nothing runs.
"""
import os, re, shutil, subprocess, sys

repo, quickstart_cpp, quickstart_bin, cli, work = sys.argv[1:6]
readme = open(os.path.join(repo, 'README.md'), encoding='utf-8').read()

blocks, section = [], None
lines = readme.split('\n')
i = 0
while i < len(lines):
    line = lines[i]
    if line.startswith('## '):
        section = line[3:].strip()
    m = re.match(r'^```(\w*)$', line)
    if m:
        j = i + 1
        while j < len(lines) and lines[j] != '```':
            j += 1
        if j == len(lines):
            sys.exit(f'README.md:{i + 1}: a code block that never closes')
        blocks.append({'line': i + 1, 'section': section, 'lang': m.group(1), 'code': '\n'.join(lines[i + 1:j]) + '\n'})
        i = j
    i += 1

failures = []
def fail(block, why):
    failures.append(f"README.md:{block['line']} ({block['section']}, {block['lang'] or 'no language'}): {why}")

def run(block, args, cwd, env=None, timeout=600):
    print(f"README.md:{block['line']}: running {' '.join(args)[:120]}", flush=True)
    r = subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)
    sys.stdout.write(r.stdout[-4000:])
    sys.stderr.write(r.stderr[-4000:])
    return r

shutil.rmtree(work, ignore_errors=True)
os.makedirs(work)
js_blocks = 0
for b in blocks:
    sec, lang = b['section'] or '', b['lang']
    if sec.startswith('Set up') and lang == 'sh':
        for cmd in b['code'].strip().split('\n'):
            cmd = cmd.split('#')[0].strip()
            m = re.fullmatch(r'bash (scripts/[\w.-]+\.sh)', cmd)
            if not m or not os.path.isfile(os.path.join(repo, m.group(1))):
                fail(b, f"'{cmd}' is not `bash scripts/<an existing script>.sh`")
        ci = open(os.path.join(repo, '.ci', 'run'), encoding='utf-8').read()
        if 'bash scripts/test.sh' not in b['code'] or 'bash scripts/test.sh' not in ci:
            fail(b, 'the test command is not the one .ci/run runs (bash scripts/test.sh)')
    elif sec == 'JavaScript quick start' and lang in ('js', 'html'):
        js_blocks += 1
    elif sec == 'C++ quick start' and lang == 'cpp':
        built = open(quickstart_cpp, encoding='utf-8').read()
        if built != b['code']:
            fail(b, f'the build compiled another version of this block ({quickstart_cpp}): rebuild readme_quickstart')
            continue
        d = os.path.join(work, 'cpp')
        os.makedirs(d)
        r = run(b, [quickstart_bin], d)
        if r.returncode != 0 or not re.search(r'test accuracy 0\.[0-9]{3}', r.stdout):
            fail(b, f'exit status {r.returncode}, expected 0 and a test accuracy')
        elif not os.path.isfile(os.path.join(d, 'mlp.safetensors')):
            fail(b, 'no mlp.safetensors written')
    elif sec == 'Command line quick start' and lang == 'sh':
        d = os.path.join(work, 'cli')
        os.makedirs(os.path.join(d, 'bin'))
        os.symlink(os.path.abspath(cli), os.path.join(d, 'bin', 'gltrain'))
        os.symlink(os.path.join(repo, 'examples'), os.path.join(d, 'examples'))
        env = dict(os.environ, PATH=os.path.join(d, 'bin') + os.pathsep + os.environ.get('PATH', ''))
        r = run(b, ['bash', '-euo', 'pipefail', '-x', '-c', b['code']], d, env)
        if r.returncode != 0:
            fail(b, f'exit status {r.returncode}')
        elif not os.path.isfile(os.path.join(d, 'fashion-mnist-mlp.safetensors')):
            fail(b, 'no fashion-mnist-mlp.safetensors written')
    else:
        fail(b, 'no test runs this block: run it from tests/readme/readme_blocks.py or move it to docs/')

if js_blocks != 4:
    failures.append(f'the JavaScript quick start has {js_blocks} js/html blocks; tests/web/package.test.mjs runs 4')
test_mjs = open(os.path.join(repo, 'tests', 'web', 'package.test.mjs'), encoding='utf-8').read()
if "'## JavaScript quick start'" not in test_mjs:
    failures.append('tests/web/package.test.mjs no longer reads the JavaScript quick start')

for f in failures:
    print('FAIL: ' + f, file=sys.stderr)
print(f'readme_blocks: {len(blocks)} blocks, {len(failures)} failures')
sys.exit(1 if failures else 0)
