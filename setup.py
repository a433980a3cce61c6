"""The native write reader (``correlator.adapters.write_readers``), the one thing ``pyproject.toml`` cannot declare
without setuptools' "experimental" warning. Optional: where no C compiler builds it, the stdlib reader serves."""

from setuptools import Extension, setup

setup(ext_modules=[Extension("correlator.adapters._write_lines", ["src/correlator/adapters/_write_lines.c"],
                             extra_compile_args=["-O3"], optional=True)])
