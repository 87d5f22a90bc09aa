# build/flm_translate.py, seed 000's translator of the `flm` qualifier (its Fig. 6; docs/files.md,
# "The flm translator"), no QEMU: Fig. 6's input gives Fig. 6's output (with flcalloc's zeroes
# and a check), which compiles with the user programs' flags; names in members, strings and
# comments stay; macros, sizeof and & follow the array; a block's array is freed at its end and
# before each return after it; every form it does not translate is refused with its line.
import subprocess
import sys

import pytest

import formica

sys.path.insert(0, str(formica.REPO_ROOT / "build"))
import flm_translate  # noqa: E402

FIGURE_6 = """#define MAX 1000
flm int a[MAX][MAX];
int main(int argc, char* argv[])
{
    int i, j;
    for (i=0; i<MAX; i++)
        for (j=0; j<MAX; j++)
            a[i][j] = i * j;
    return 0;
}
"""

FIGURE_6_TRANSLATED = """#include <formica/flmalloc.h>
#include <stdlib.h>
#define MAX 1000
int (*__flm_a)[MAX];
int main(int argc, char* argv[])
{
    __flm_a = (int (*)[MAX])flcalloc((size_t)(MAX), sizeof(*__flm_a)); if (__flm_a == NULL) abort();
    int i, j;
    for (i=0; i<MAX; i++)
        for (j=0; j<MAX; j++)
            __flm_a[i][j] = i * j;
    { flfree(__flm_a); return 0; }
    flfree(__flm_a);
}
"""


def compiles(tmp_path, text):
    """Compiles `text` as build/user.mk compiles a user program (syntax and types only)."""
    source = tmp_path / "translated.c"
    source.write_text(text)
    include = subprocess.run(["gcc", "-print-file-name=include"], capture_output=True,
                             text=True).stdout.strip()
    done = subprocess.run(["gcc", "-std=gnu11", "-Wall", "-Wextra", "-Werror", "-ffreestanding",
                           "-nostdinc", "-isystem", include,
                           "-I", str(formica.REPO_ROOT / "lib" / "include"),
                           "-I", str(formica.OUT_DIR / "gen"), "-fsyntax-only", str(source)],
                          capture_output=True, text=True)
    return done.returncode == 0, done.stderr


def test_figure_6(tmp_path):
    translated = flm_translate.translate(FIGURE_6)
    assert translated == FIGURE_6_TRANSLATED
    ok, errors = compiles(tmp_path, translated.replace("int argc, char* argv[]", "void"))
    assert ok, errors


def test_a_source_without_flm_is_unchanged():
    source = "int flmx[3];\nint main(void) { return flmx[0]; } /* flm a[1]; */\n"
    assert flm_translate.translate(source) == source


def test_members_strings_and_comments_keep_the_name(tmp_path):
    source = """struct pair { int grid; };
flm double grid[64][32];
int main(void)
{
    struct pair p = {1}, *q = &p;
    const char *text = "grid";  /* grid */
    grid[1][2] = p.grid + q->grid + text[0];
    return 0;
}
"""
    translated = flm_translate.translate(source)
    assert "p.grid + q->grid" in translated
    assert '"grid"' in translated and "/* grid */" in translated
    assert "__flm_grid[1][2] = " in translated
    assert "struct pair { int grid; };" in translated
    ok, errors = compiles(tmp_path, translated)
    assert ok, errors


def test_macros_sizeof_and_address_follow_the_array(tmp_path):
    source = """#define CELL(i, j) cells[i][j]
flm unsigned long cells[100][10];
int main(void)
{
    CELL(1, 2) = sizeof cells + sizeof(cells) + sizeof cells[0];
    unsigned long (*whole)[100][10] = &cells;
    return (int)(*whole)[0][0];
}
"""
    translated = flm_translate.translate(source)
    assert "#define CELL(i, j) __flm_cells[i][j]" in translated
    assert "((100) * (10) * sizeof(unsigned long)) + ((100) * (10) * sizeof(unsigned long))" \
        in translated
    assert "sizeof __flm_cells[0]" in translated
    assert "= ((unsigned long (*)[100][10])__flm_cells);" in translated
    ok, errors = compiles(tmp_path, translated)
    assert ok, errors


def test_a_block_array_is_freed_at_its_end_and_before_later_returns(tmp_path):
    source = """int work(int early)
{
    if (early)
        return -1;
    flm int line[4096];
    line[7] = early;
    if (line[7] != 0)
        return 1;
    {
        flm char inner[16384];
        inner[0] = 1;
        if (inner[0])
            return 2;
    }
    return 0;
}
int main(void) { return work(0); }
"""
    translated = flm_translate.translate(source)
    assert "if (early)\n        return -1;" in translated  # before the array: nothing to free
    assert "{ flfree(__flm_line); return 1; }" in translated
    assert "{ flfree(__flm_line); { flfree(__flm_inner); return 2; } }" in translated \
        or "{ flfree(__flm_inner); { flfree(__flm_line); return 2; } }" in translated
    assert "{ flfree(__flm_line); return 0; }" in translated
    assert "int *__flm_line; __flm_line = (int *)flcalloc((size_t)(4096)" in translated
    assert translated.count("flfree(__flm_inner);") == 2  # the return, the block's end
    ok, errors = compiles(tmp_path, translated)
    assert ok, errors


@pytest.mark.parametrize("source, message", [
    ("flm int a[4] = {1, 2, 3, 4};\nint main(void) { return 0; }\n",
     "line 1: flm array a: an initializer is not translated"),
    ("flm int a[4], b[4];\nint main(void) { return 0; }\n",
     "line 1: flm array a: more than one declarator is not translated"),
    ("int f(void) {\n    static flm int a[4];\n    return 0;\n}\n",
     "line 2: flm array a: a static array inside a function keeps its values across calls"),
    ("flm int a[4];\nint main(void)\n{\n    return a[0];\n}\n",
     "line 4: a return reads flm array a, which is freed first"),
    ("flm int a[4];\nint other(void) { return 0; }\n",
     "line 1: file-scope flm arrays are taken at the start of main()"),
    ("flm int a;\nint main(void) { return 0; }\n",
     "line 1: flm qualifies an array declaration"),
    ("extern flm int a[4];\nint main(void) { return 0; }\n",
     "line 1: flm array a: only static may qualify it"),
    ("flm int a[];\nint main(void) { return 0; }\n",
     "line 1: flm array a: every dimension needs a size"),
    ("flm int a[4];\nflm int a[4];\nint main(void) { return 0; }\n",
     "line 2: flm array a declared twice"),
])
def test_refusals(source, message):
    with pytest.raises(flm_translate.TranslateError) as refused:
        flm_translate.translate(source)
    assert str(refused.value).startswith(message), str(refused.value)


def test_the_command_line(tmp_path):
    good, bad = tmp_path / "good.flm", tmp_path / "bad.flm"
    good.write_text(FIGURE_6)
    bad.write_text("flm int a[4] = {0};\nint main(void) { return 0; }\n")
    script = str(formica.REPO_ROOT / "build" / "flm_translate.py")
    done = subprocess.run([sys.executable, script, str(good), str(tmp_path / "good.c")],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "good.c").read_text().endswith(FIGURE_6_TRANSLATED)
    done = subprocess.run([sys.executable, script, str(bad), str(tmp_path / "bad.c")],
                          capture_output=True, text=True)
    assert done.returncode != 0
    assert f"{bad}: line 1: flm array a: an initializer" in done.stderr
    assert not (tmp_path / "bad.c").exists()
