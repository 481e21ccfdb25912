#!/usr/bin/env bash
# Installs the system tools harrow's tests use, when they are missing (Debian bookworm,
# run as root or with sudo). Safe to run repeatedly.
#   clang-19, lld-19, llvm-19 : compile and inspect generated C for every target
#   qemu-user                 : run AArch64, Hexagon and RISC-V programs
#   gcc-aarch64-linux-gnu, libc6-dev-arm64-cross : the AArch64 sysroot clang links against
#   gcc-riscv64-linux-gnu, libc6-dev-riscv64-cross : the RISC-V sysroot clang links against
#   z3                        : the SMT solver that proves rules
#   cvc5                      : the second solver `harrow verify --solver cvc5` drives
#   libeigen3-dev             : Eigen 3.4, the float kernels' library baseline (harrow bench --float)
set -euo pipefail

need=()
command -v clang-19 >/dev/null || need+=(clang-19)
command -v ld.lld-19 >/dev/null || need+=(lld-19)
command -v llvm-mca-19 >/dev/null || need+=(llvm-19)
command -v qemu-aarch64 >/dev/null || need+=(qemu-user)
command -v qemu-hexagon >/dev/null || need+=(qemu-user)
command -v aarch64-linux-gnu-gcc >/dev/null || need+=(gcc-aarch64-linux-gnu)
[ -d /usr/aarch64-linux-gnu/include ] || need+=(libc6-dev-arm64-cross)
command -v qemu-riscv64 >/dev/null || need+=(qemu-user)
command -v riscv64-linux-gnu-gcc >/dev/null || need+=(gcc-riscv64-linux-gnu)
[ -d /usr/riscv64-linux-gnu/include ] || need+=(libc6-dev-riscv64-cross)
command -v z3 >/dev/null || need+=(z3)
command -v cvc5 >/dev/null || need+=(cvc5)
[ -d /usr/include/eigen3/Eigen ] || need+=(libeigen3-dev)

if [ ${#need[@]} -eq 0 ]; then
    echo "install-deps: everything is already installed"
    exit 0
fi

sudo=""
if [ "$(id -u)" -ne 0 ]; then
    sudo="sudo"
fi
echo "install-deps: installing ${need[*]}"
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
# shellcheck disable=SC2068
$sudo apt-get install -y -qq --no-install-recommends ${need[@]} >/dev/null
echo "install-deps: done"
