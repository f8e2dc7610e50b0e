#!/usr/bin/env bash
# scripts/wine-setup.sh: make GOOS=windows Go binaries runnable under Wine on Debian 12.
#  * installs wine 8 (64-bit) and binutils-mingw-w64-x86-64 (assembler and linker only)
#  * builds a stand-in bcryptprimitives.dll exporting ProcessPrng (Go >= 1.22 needs it;
#    Wine < 9 lacks it) from assembly: no C compiler needed
#  * creates a 64-bit WINEPREFIX and puts the DLL into its system32
# Idempotent. Usage: bash scripts/wine-setup.sh   (WINEPREFIX defaults to ~/.wine-zeroclaw)
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
export WINEPREFIX=${WINEPREFIX:-$HOME/.wine-zeroclaw} WINEARCH=win64 WINEDEBUG=-all
export WINEDLLOVERRIDES="mscoree,mshtml="   # no Mono/Gecko install prompts
t0=$SECONDS

if ! command -v wine >/dev/null || ! command -v x86_64-w64-mingw32-ld >/dev/null; then
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
    wine wine64 binutils-mingw-w64-x86-64 >/dev/null
fi
echo "setup: packages ready after $((SECONDS - t0))s ($(wine --version 2>/dev/null))"

STUB=$(mktemp -d)   # build dir for the stub DLL (this folder may be read-only)
mkdir -p "$STUB"
cat >"$STUB/bcryptprimitives.s" <<'ASM'
# BOOL WINAPI ProcessPrng(PBYTE pbData /*rcx*/, SIZE_T cbData /*rdx*/)
#   -> advapi32!SystemFunction036 (RtlGenRandom)(PVOID, ULONG), in <= 1 GiB chunks.
        .text
        .globl  ProcessPrng
ProcessPrng:
        push    %rsi
        push    %rdi
        sub     $40, %rsp
        mov     %rcx, %rsi
        mov     %rdx, %rdi
1:      test    %rdi, %rdi
        jz      2f
        mov     $0x40000000, %edx
        cmp     %rdx, %rdi
        cmovb   %rdi, %rdx
        mov     %rsi, %rcx
        add     %rdx, %rsi
        sub     %rdx, %rdi
        call    *__imp_SystemFunction036(%rip)
        test    %al, %al
        jnz     1b
        xor     %eax, %eax
        jmp     3f
2:      mov     $1, %eax
3:      add     $40, %rsp
        pop     %rdi
        pop     %rsi
        ret
        .globl  DllMain
DllMain:
        mov     $1, %eax
        ret
ASM
printf 'LIBRARY advapi32.dll\nEXPORTS\nSystemFunction036\n' >"$STUB/advapi32.def"
printf 'LIBRARY bcryptprimitives.dll\nEXPORTS\nProcessPrng\n' >"$STUB/bcryptprimitives.def"
( cd "$STUB"
  x86_64-w64-mingw32-as -o bcryptprimitives.o bcryptprimitives.s
  x86_64-w64-mingw32-dlltool -d advapi32.def -l libadvapi32.a
  x86_64-w64-mingw32-ld -shared -s --entry DllMain --subsystem windows \
    -o bcryptprimitives.dll bcryptprimitives.o bcryptprimitives.def libadvapi32.a )

if [ ! -f "$WINEPREFIX/system.reg" ]; then
  wineboot --init >/dev/null 2>&1 || true
  wineserver -w
fi
SYS32=$WINEPREFIX/drive_c/windows/system32
test -d "$SYS32"
cp "$STUB/bcryptprimitives.dll" "$SYS32/bcryptprimitives.dll"
echo "setup: WINEPREFIX=$WINEPREFIX ready, stub installed, total $((SECONDS - t0))s"
