#!/usr/bin/env python3
"""The Fortran bindings of weft's MPI, made from the C API as mpi.h declares it.

Inputs: the MPI_ prototypes of include/mpi.h (read as mpi/api/generate.py reads them), its integer
constants and predefined objects, and mpi/interop/handle_kinds.{h,cpp} (each kind of handle and
the order of its predefined objects, whose positions are their Fortran integers). Outputs, into
OUT_DIR (the first two
in its include/):

  mpif.h            constants, predefined handles, the special addresses as COMMON blocks and the
                    functions' result types, in the subset of Fortran that fixed and free form share;
  mpi.f90           the `mpi` module: mpif.h's declarations, for `use mpi`;
  mpi_bindings.c    the Fortran-callable layer: for each C function it can bind, pmpi_<name>_ (and
                    its weak alias mpi_<name>_) with gfortran's calling convention, converting
                    handles, statuses, strings and special addresses; the calls it cannot bind yet
                    are listed at its end, with the reason;
  omp_lib.f90, omp_lib.h  OpenMP's Fortran interface over weft's omp.h (bind(C) interfaces).

A C function added to mpi.h gets its Fortran form at the next build (CMake runs this script when
mpi.h or the handle tables change).
"""

import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "mpi" / "api"))
import generate as capi  # noqa: E402

# Fortran status: the C status field by field (mpi/interop/status_conversion.cpp).
STATUS_SIZE = 6
KINDS = [("MPI_ADDRESS_KIND", 8), ("MPI_OFFSET_KIND", 8), ("MPI_COUNT_KIND", 8),
         ("MPI_INTEGER_KIND", 4)]

BUFFERS = {"buf", "sendbuf", "recvbuf", "buffer", "inbuf", "outbuf", "inoutbuf", "origin_addr",
           "result_addr", "compare_addr", "base", "location"}
# Calls whose handle arguments are read and written (others' handle pointers are outputs): when
# one comes back null, the call freed the object and the integer is taken back.
INOUT = re.compile(r"^MPI_(\w+_free|Wait\w*|Test\w*|Request_free|Session_finalize|Comm_disconnect"
                     r"|Mrecv|Imrecv|Start\w*|Type_commit|Win_free)$")
LENGTHS = ("count", "incount", "max_datatypes")
# Calls whose buffer MPI keeps past the call and past any request (a window's memory, an attached
# buffer, the origin of one-sided operations until a synchronization): mpi_f08 passes their
# buffers as they are, never through a contiguous copy (fortran_support.h, weft_f08_buffer_in).
KEEPS_BUFFER = re.compile(r"^MPI_(Win_\w+|Put|Get|Accumulate|Get_accumulate|Fetch_and_op"
                          r"|Compare_and_swap|Rput|Rget|Raccumulate|Rget_accumulate"
                          r"|Buffer_attach|\w+_attach_buffer)$")
# MPI-1's address calls, removed in MPI-3.0: their Fortran forms take default INTEGER addresses.
MPI1_INTEGER_ADDRESSES = {"MPI_Type_hvector", "MPI_Type_hindexed", "MPI_Type_struct", "MPI_Address",
                          "MPI_Type_extent", "MPI_Type_lb", "MPI_Type_ub"}
# The length of a datatype array that is not an argument: the size of the communicator's group
# (the remote one for an intercommunicator).
GROUP_LENGTHS = {"MPI_Alltoallw", "MPI_Ialltoallw", "MPI_Alltoallw_init"}
# Fortran's special addresses: name, COMMON block, C expression it stands for, Fortran declaration.
SPECIAL = [
    ("MPI_BOTTOM", "mpi_fortran_bottom", "MPI_BOTTOM", "INTEGER MPI_BOTTOM", 1),
    ("MPI_IN_PLACE", "mpi_fortran_in_place", "MPI_IN_PLACE", "INTEGER MPI_IN_PLACE", 1),
    ("MPI_STATUS_IGNORE", "mpi_fortran_status_ignore", None,
     "INTEGER MPI_STATUS_IGNORE(MPI_STATUS_SIZE)", STATUS_SIZE),
    ("MPI_STATUSES_IGNORE", "mpi_fortran_statuses_ignore", None,
     "INTEGER MPI_STATUSES_IGNORE(MPI_STATUS_SIZE,1)", STATUS_SIZE),
    ("MPI_UNWEIGHTED", "mpi_fortran_unweighted", "MPI_UNWEIGHTED", "INTEGER MPI_UNWEIGHTED(1)", 1),
    ("MPI_WEIGHTS_EMPTY", "mpi_fortran_weights_empty", "MPI_WEIGHTS_EMPTY",
     "INTEGER MPI_WEIGHTS_EMPTY(1)", 1),
    ("MPI_ERRCODES_IGNORE", "mpi_fortran_errcodes_ignore", None,
     "INTEGER MPI_ERRCODES_IGNORE(1)", 1),
    ("MPI_ARGV_NULL", "mpi_fortran_argv_null", "MPI_ARGV_NULL", "CHARACTER*1 MPI_ARGV_NULL(1)", 1),
    ("MPI_ARGVS_NULL", "mpi_fortran_argvs_null", "MPI_ARGVS_NULL",
     "CHARACTER*1 MPI_ARGVS_NULL(1,1)", 1),
]
# mpi_f08's ignore-statuses (TYPE(MPI_Status)), also COMMON blocks: MPI_F08_STATUS(ES)_IGNORE.
SPECIAL_F08 = [("MPI_STATUS_IGNORE", "mpi_f08_status_ignore", "TYPE(MPI_Status) MPI_STATUS_IGNORE"),
               ("MPI_STATUSES_IGNORE", "mpi_f08_statuses_ignore",
                "TYPE(MPI_Status) MPI_STATUSES_IGNORE(1)")]


class Kinds:
    """Handle kinds (handle_kinds.h) and the Fortran integer of every predefined object."""

    def __init__(self):
        header = (ROOT / "mpi/interop/handle_kinds.h").read_text()
        source = (ROOT / "mpi/interop/handle_kinds.cpp").read_text()
        self.by_type = {}  # "MPI_Datatype" -> ("Type", "datatype")
        lists = {}
        for name, ctype, kind, predefined in re.findall(
                r"X\((\w+), (\w+), (\w+), (\w+)\)", header):
            self.by_type["MPI_" + ctype] = (name, kind)
            lists[kind] = predefined
        self.integers = {}  # "weft_mpi_comm_world" -> 1
        self.type_of = {}  # "weft_mpi_comm_world" -> "MPI_Comm"
        ctype_of_kind = {kind: ctype for ctype, (_, kind) in self.by_type.items()}
        for kind, predefined in lists.items():
            m = re.search(r"std::array " + predefined + r"\{(.*?)\};", source, re.S)
            if not m:
                continue
            for i, obj in enumerate(re.findall(r"&(weft_mpi_\w+)", m.group(1))):
                self.integers[obj] = i + 1
                self.type_of[obj] = ctype_of_kind[kind]


def constants(mpi_h, kinds):
    """(name, value, handle type or None) of every integer constant and predefined handle of
    mpi.h, in its order."""
    objects = set()
    for m in re.finditer(r"^extern struct weft_mpi_\w+ ([^;]*);", mpi_h, re.M):
        objects.update(n.strip() for n in m.group(1).split(","))
    missing = sorted(objects - set(kinds.integers))
    if missing:
        raise SystemExit("mpi/fortran/generate.py: predefined objects without a Fortran integer "
                         f"(add them to mpi/interop/handle_kinds.cpp): {', '.join(missing)}")
    out = []
    for m in re.finditer(r"^#define (MPI_\w+) (.*)$", mpi_h, re.M):
        name, value = m.group(1), m.group(2).strip()
        if name.startswith(("MPI_F_", "MPI_F08_")) or name in ("MPI_SOURCE", "MPI_TAG", "MPI_ERROR"):
            continue
        v = re.fullmatch(r"\(?(-?(?:0x[0-9a-fA-F]+|\d+))\)?", value)
        if v:
            out.append((name, int(v.group(1), 0), None))
            continue
        v = re.fullmatch(r"\(&(weft_mpi_\w+)\)", value)
        if v and v.group(1) in kinds.integers:
            out.append((name, kinds.integers[v.group(1)], kinds.type_of[v.group(1)]))
            continue
        v = re.fullmatch(r"\(\((MPI_\w+)\)0\)", value)
        if v and v.group(1) in kinds.by_type:
            out.append((name, 0, v.group(1)))
    out += [("MPI_STATUS_SIZE", STATUS_SIZE, None), ("MPI_SOURCE", 1, None), ("MPI_TAG", 2, None),
            ("MPI_ERROR", 3, None)]
    return out


def fixed(line):
    """A statement in the form fixed and free source both read: columns 7 to 72, continued with
    '&' in column 73 (past fixed form's end) and '&' in column 6 of the next line."""
    chunks = [line[i:i + 66] for i in range(0, len(line), 66)]
    out = "      " + chunks[0]
    for chunk in chunks[1:]:
        out += "&\n     &" + chunk
    return out


def mpif_text(consts):
    out = ["! The MPI constants and declarations of weft for Fortran (fixed or free form).",
           "! Generated by mpi/fortran/generate.py from include/mpi.h: do not edit."]
    for name, value, _ in [k + (None,) for k in KINDS] + consts:
        out.append(fixed(f"INTEGER {name}"))
        out.append(fixed(f"PARAMETER ({name}={value})"))
    for name, common, _, decl, _ in SPECIAL:
        out.append(fixed(decl))
        out.append(fixed(f"COMMON /{common.upper()}/ {name}"))
        out.append(fixed(f"SAVE /{common.upper()}/"))
    for name in keyval_names():
        out.append(fixed(f"EXTERNAL {name}"))
    for prefix in ("MPI", "PMPI"):
        out.append(fixed(f"DOUBLE PRECISION {prefix}_WTIME, {prefix}_WTICK"))
        out.append(fixed(f"EXTERNAL {prefix}_WTIME, {prefix}_WTICK"))
    return "\n".join(out) + "\n"


def module_text(consts, bindings):
    """The `mpi` module: mpif.h's constants and COMMON blocks, and an explicit interface for each
    bound function (choice buffers accept any type, kind and rank: NO_ARG_CHECK)."""
    out = ["! The `mpi` module of weft: mpif.h's declarations and explicit interfaces.",
           "! Generated by mpi/fortran/generate.py from include/mpi.h: do not edit.",
           "module mpi", "  implicit none"]
    for name, value, _ in [k + (None,) for k in KINDS] + consts:
        out.append(f"  integer, parameter :: {name} = {value}")
    for name, common, _, decl, _ in SPECIAL:
        out.append("  " + decl)
        out.append(f"  common /{common}/ {name}")
        out.append(f"  save /{common}/")
    out.append("  external :: " + ", ".join(keyval_names()))
    out.append("  interface")
    for b in (b for b in bindings if not b.f08):
        for line in b.interface():
            out.append(line if line.startswith("!") else "    " + line)
    for text in CUSTOM_INTERFACES.values():
        out += [line if line.startswith("!") else "    " + line for line in text]
    out += ["  end interface"]
    interface, procedures = sizeof_text(False)
    out += interface + ["contains"] + procedures + ["end module mpi"]
    return "\n".join(line_split(line) for line in out) + "\n"


def line_split(line):
    """Free-form lines within 132 columns."""
    if len(line) <= 130:
        return line
    cut = line.rindex(",", 0, 120) + 1
    return line[:cut] + " &\n" + line_split("      & " + line[cut:].lstrip())


CUSTOM_INTERFACES = {
    "MPI_Init": ["SUBROUTINE MPI_Init(ierror)", "  INTEGER :: ierror", "END SUBROUTINE"],
    "MPI_Init_thread": ["SUBROUTINE MPI_Init_thread(required, provided, ierror)",
                        "  INTEGER :: required, provided, ierror", "END SUBROUTINE"],
    "MPI_Info_create_env": ["SUBROUTINE MPI_Info_create_env(info, ierror)",
                            "  INTEGER :: info, ierror", "END SUBROUTINE"],
}
for _kind in ("Comm", "Type", "Win"):
    CUSTOM_INTERFACES[f"MPI_{_kind}_set_attr"] = [
        f"SUBROUTINE MPI_{_kind}_set_attr(handle, keyval, attribute_val, ierror)",
        "  IMPORT", "  INTEGER :: handle, keyval, ierror",
        "  INTEGER(KIND=MPI_ADDRESS_KIND) :: attribute_val", "END SUBROUTINE"]
    CUSTOM_INTERFACES[f"MPI_{_kind}_get_attr"] = [
        f"SUBROUTINE MPI_{_kind}_get_attr(handle, keyval, attribute_val, flag, ierror)",
        "  IMPORT", "  INTEGER :: handle, keyval, ierror",
        "  INTEGER(KIND=MPI_ADDRESS_KIND) :: attribute_val", "  LOGICAL :: flag",
        "END SUBROUTINE"]
CUSTOM_INTERFACES["MPI_Op_create"] = [
    "SUBROUTINE MPI_Op_create(user_fn, commute, op, ierror)", "  EXTERNAL :: user_fn",
    "  LOGICAL :: commute", "  INTEGER :: op, ierror", "END SUBROUTINE"]
for _kind in ("Comm", "Type", "Win"):
    CUSTOM_INTERFACES[f"MPI_{_kind}_create_keyval"] = [
        f"SUBROUTINE MPI_{_kind}_create_keyval(copy_fn, delete_fn, keyval, extra_state, ierror)",
        "  IMPORT", "  EXTERNAL :: copy_fn, delete_fn", "  INTEGER :: keyval, ierror",
        "  INTEGER(KIND=MPI_ADDRESS_KIND) :: extra_state", "END SUBROUTINE"]
CUSTOM_INTERFACES["MPI_Keyval_create"] = [
    "SUBROUTINE MPI_Keyval_create(copy_fn, delete_fn, keyval, extra_state, ierror)",
    "  EXTERNAL :: copy_fn, delete_fn", "  INTEGER :: keyval, extra_state, ierror",
    "END SUBROUTINE"]
for _name in ("PMPI_Wtime", "PMPI_Wtick"):
    CUSTOM_INTERFACES[_name] = [f"DOUBLE PRECISION FUNCTION {_name}()", "END FUNCTION"]
CUSTOM_INTERFACES["MPI_Info_get_string"] = [
    "SUBROUTINE MPI_Info_get_string(info, key, buflen, value, flag, ierror)",
    "  INTEGER :: info, buflen, ierror", "  CHARACTER(LEN=*) :: key, value", "  LOGICAL :: flag",
    "END SUBROUTINE"]
for _name in ("MPI_Comm_create_errhandler", "MPI_Win_create_errhandler", "MPI_Errhandler_create"):
    CUSTOM_INTERFACES[_name] = [f"SUBROUTINE {_name}(function, errhandler, ierror)",
                                "  EXTERNAL :: function", "  INTEGER :: errhandler, ierror",
                                "END SUBROUTINE"]
CUSTOM_INTERFACES["MPI_Grequest_start"] = [
    "SUBROUTINE MPI_Grequest_start(query_fn, free_fn, cancel_fn, extra_state, request, ierror)",
    "  IMPORT", "  EXTERNAL :: query_fn, free_fn, cancel_fn",
    "  INTEGER(KIND=MPI_ADDRESS_KIND) :: extra_state", "  INTEGER :: request, ierror",
    "END SUBROUTINE"]
CUSTOM_INTERFACES["MPI_Alloc_mem"] = [
    "SUBROUTINE MPI_Alloc_mem(size, info, baseptr, ierror)", "  IMPORT",
    "  INTEGER(KIND=MPI_ADDRESS_KIND) :: size, baseptr", "  INTEGER :: info, ierror",
    "END SUBROUTINE"]
CUSTOM_INTERFACES["MPI_Attr_put"] = ["SUBROUTINE MPI_Attr_put(comm, keyval, attribute_val, ierror)",
                                     "  INTEGER :: comm, keyval, attribute_val, ierror",
                                     "END SUBROUTINE"]
CUSTOM_INTERFACES["MPI_Attr_get"] = [
    "SUBROUTINE MPI_Attr_get(comm, keyval, attribute_val, flag, ierror)",
    "  INTEGER :: comm, keyval, attribute_val, ierror", "  LOGICAL :: flag", "END SUBROUTINE"]

def f08_module_text(consts, bindings, kinds):
    """The `mpi_f08` module: handle types (TYPE(MPI_Comm) holding the integer handle), MPI_Status,
    the constants, and an interface per bound function to its C form (BIND(C): buffers are
    TYPE(*), DIMENSION(..), strings CHARACTER(LEN=*), both as C descriptors; ierror optional)."""
    out = ["! The `mpi_f08` module of weft.",
           "! Generated by mpi/fortran/generate.py from include/mpi.h: do not edit.",
           "module mpi_f08", "  use, intrinsic :: iso_c_binding, only: c_int",
           "  implicit none"]
    types = sorted({ctype for ctype in kinds.by_type})
    for ctype in types:
        out += [f"  type, bind(C) :: {ctype}", "    integer(c_int) :: MPI_VAL", "  end type"]
    out += ["  type, bind(C) :: MPI_Status", "    integer(c_int) :: MPI_SOURCE, MPI_TAG, MPI_ERROR",
            "    integer(c_int) :: weft_internal(3)", "  end type"]
    for name, value, ctype in [k + (None,) for k in KINDS] + consts:
        if ctype:
            out.append(f"  type({ctype}), parameter :: {name} = {ctype}({value})")
        elif name not in ("MPI_SOURCE", "MPI_TAG", "MPI_ERROR"):
            out.append(f"  integer, parameter :: {name} = {value}")
    out.append("  logical, parameter :: MPI_SUBARRAYS_SUPPORTED = .false.")
    out.append("  logical, parameter :: MPI_ASYNC_PROTECTS_NONBLOCKING = .false.")
    for name, common, _, decl, _ in SPECIAL:
        if name in ("MPI_STATUS_IGNORE", "MPI_STATUSES_IGNORE"):
            continue
        out += ["  " + decl, f"  common /{common}/ {name}", f"  save /{common}/"]
    for name, common, decl in SPECIAL_F08:
        out += ["  " + decl, f"  common /{common}/ {name}", f"  save /{common}/"]
    # The predefined attribute callbacks: their Fortran forms (keyval_text), as in the mpi module.
    out.append("  external :: " + ", ".join(keyval_names()))
    out.append("  interface operator(==)")
    out += [f"    module procedure weft_{t[4:].lower()}_eq" for t in types]
    out += ["  end interface", "  interface operator(/=)"]
    out += [f"    module procedure weft_{t[4:].lower()}_ne" for t in types]
    out += ["  end interface", "  interface"]
    for b in (b for b in bindings if b.f08):
        for line in b.interface():
            out.append("    " + line)
    # The profiling names of the two functions (the others are subroutines a program declares
    # itself when it calls them by their PMPI_ names).
    for name in ("PMPI_Wtime", "PMPI_Wtick"):
        out += [f"    DOUBLE PRECISION FUNCTION {name}() BIND(C, NAME='{name.lower()}_f08')",
                "    END FUNCTION"]
    for name, params, decls in CUSTOM_F08:
        # The mpif.h form itself (custom_bindings.c accepts an absent ierror).
        out.append(f"    SUBROUTINE {name}({', '.join(params + ['ierror'])})")
        out += ["      IMPORT"] + ["      " + d for d in decls]
        out += ["      INTEGER, OPTIONAL :: ierror", "    END SUBROUTINE"]
    out += ["  end interface"]
    interface, procedures = sizeof_text(True)
    out += interface + ["contains"] + procedures
    for t in types:
        short = t[4:].lower()
        for op, test in (("eq", "=="), ("ne", "/=")):
            out += [f"  elemental logical function weft_{short}_{op}(a, b)",
                    f"    type({t}), intent(in) :: a, b",
                    f"    weft_{short}_{op} = a%MPI_VAL {test} b%MPI_VAL",
                    f"  end function weft_{short}_{op}"]
    out.append("end module mpi_f08")
    return "\n".join(line_split(line) for line in out) + "\n"


# The custom_bindings.c functions in mpi_f08 (their mpif.h forms, whose arguments mpi_f08's types
# match): name, dummy arguments, their declarations.
CUSTOM_F08 = [
    ("MPI_Init", [], []),
    ("MPI_Init_thread", ["required", "provided"], ["INTEGER :: required, provided"]),
    ("MPI_Info_create_env", ["info"], ["TYPE(MPI_Info) :: info"]),
    ("MPI_Grequest_start", ["query_fn", "free_fn", "cancel_fn", "extra_state", "request"],
     ["EXTERNAL :: query_fn, free_fn, cancel_fn", "INTEGER(KIND=MPI_ADDRESS_KIND) :: extra_state",
      "TYPE(MPI_Request) :: request"]),
    ("MPI_Comm_create_errhandler", ["function", "errhandler"],
     ["EXTERNAL :: function", "TYPE(MPI_Errhandler) :: errhandler"]),
    ("MPI_Win_create_errhandler", ["function", "errhandler"],
     ["EXTERNAL :: function", "TYPE(MPI_Errhandler) :: errhandler"]),
    ("MPI_Info_get_string", ["info", "key", "buflen", "value", "flag"],
     ["TYPE(MPI_Info) :: info", "CHARACTER(LEN=*) :: key, value", "INTEGER :: buflen",
      "LOGICAL :: flag"]),
    ("MPI_Op_create", ["user_fn", "commute", "op"],
     ["EXTERNAL :: user_fn", "LOGICAL :: commute", "TYPE(MPI_Op) :: op"]),
] + [(f"MPI_{kind}_set_attr", ["handle", "keyval", "attribute_val"],
      [f"TYPE(MPI_{ctype}) :: handle", "INTEGER :: keyval",
       "INTEGER(KIND=MPI_ADDRESS_KIND) :: attribute_val"])
     for kind, ctype in (("Comm", "Comm"), ("Type", "Datatype"), ("Win", "Win"))] + [
    (f"MPI_{kind}_get_attr", ["handle", "keyval", "attribute_val", "flag"],
     [f"TYPE(MPI_{ctype}) :: handle", "INTEGER :: keyval",
      "INTEGER(KIND=MPI_ADDRESS_KIND) :: attribute_val", "LOGICAL :: flag"])
    for kind, ctype in (("Comm", "Comm"), ("Type", "Datatype"), ("Win", "Win"))] + [
    (f"MPI_{kind}_create_keyval", ["copy_fn", "delete_fn", "keyval", "extra_state"],
     ["EXTERNAL :: copy_fn, delete_fn", "INTEGER :: keyval",
      "INTEGER(KIND=MPI_ADDRESS_KIND) :: extra_state"]) for kind in ("Comm", "Type", "Win")]


# Keyvals with Fortran callbacks (MPI-4.1 7.7.2): the C keyval's extra_state points at the Fortran
# procedures and the program's extra_state; C trampolines convert the arguments. For each kind:
# (name in the calls, C handle type, name in the predefined callbacks, value type in Fortran);
# MPI-1's MPI_KEYVAL_CREATE has INTEGER values.
KEYVAL_KINDS = [("Comm", "MPI_Comm", "comm", "MPI_Aint"), ("Type", "MPI_Datatype", "type", "MPI_Aint"),
                ("Win", "MPI_Win", "win", "MPI_Aint"), ("Keyval", "MPI_Comm", "", "MPI_Fint")]


def keyval_text():
    out = ["/* Keyvals created from Fortran: the Fortran procedures are called through trampolines. */"]
    for name, ctype, short, value in KEYVAL_KINDS:
        mpi1 = name == "Keyval"
        conv = "Comm" if mpi1 else name
        prefix = "" if mpi1 else f"{short}_"
        fn = f"weft_f_{short or 'mpi1'}"
        lower = "keyval_create" if mpi1 else f"{short}_create_keyval"
        cname = "MPI_Keyval_create" if mpi1 else f"MPI_{name}_create_keyval"
        out += [
            f"typedef void({fn}_copy)(MPI_Fint* old, MPI_Fint* keyval, {value}* extra_state,",
            f"    {value}* attribute_val_in, {value}* attribute_val_out, MPI_Fint* flag, MPI_Fint* ierror);",
            f"typedef void({fn}_delete)(MPI_Fint* object, MPI_Fint* keyval, {value}* attribute_val,",
            f"    {value}* extra_state, MPI_Fint* ierror);",
            f"struct {fn}_keyval {{",
            f"  {fn}_copy* copy;",
            f"  {fn}_delete* del;",
            f"  {value} extra_state;",
            f"}};",
            f"static int {fn}_copy_trampoline({ctype} old, int keyval, void* extra, void* in, void* out, int* flag) {{",
            f"  struct {fn}_keyval* k = (struct {fn}_keyval*)extra;",
            f"  MPI_Fint f_old = MPI_{conv}_c2f(old), f_keyval = keyval, f_flag = 0, ierror = MPI_SUCCESS;",
            f"  {value} f_in = ({value})(intptr_t)in, f_out = 0;",
            f"  k->copy(&f_old, &f_keyval, &k->extra_state, &f_in, &f_out, &f_flag, &ierror);",
            f"  *flag = f_flag != 0;",
            f"  if (f_flag) *(void**)out = (void*)(intptr_t)f_out;",
            f"  return ierror;",
            f"}}",
            f"static int {fn}_delete_trampoline({ctype} object, int keyval, void* value, void* extra) {{",
            f"  struct {fn}_keyval* k = (struct {fn}_keyval*)extra;",
            f"  MPI_Fint f_object = MPI_{conv}_c2f(object), f_keyval = keyval, ierror = MPI_SUCCESS;",
            f"  {value} f_value = ({value})(intptr_t)value;",
            f"  k->del(&f_object, &f_keyval, &f_value, &k->extra_state, &ierror);",
            f"  return ierror;",
            f"}}",
            f"/* The procedures live as long as the program: a freed keyval's attributes still call them. */",
            f"void pmpi_{lower}_({fn}_copy* copy_fn, {fn}_delete* delete_fn, MPI_Fint* keyval,",
            f"    {value}* extra_state, MPI_Fint* ierror) {{",
            f"  struct {fn}_keyval* k = (struct {fn}_keyval*)malloc(sizeof *k);",
            f"  k->copy = copy_fn;",
            f"  k->del = delete_fn;",
            f"  k->extra_state = *extra_state;",
            f"  int rc = P{cname}({fn}_copy_trampoline, {fn}_delete_trampoline, keyval, k);",
            f"  if (ierror != NULL) *ierror = rc;",
            f"}}",
            f'extern __typeof__(pmpi_{lower}_) mpi_{lower}_ __attribute__((weak, alias("pmpi_{lower}_")));',
            f"/* The predefined callbacks in their Fortran forms. */",
            f"void mpi_{prefix}null_copy_fn_(MPI_Fint* old, MPI_Fint* keyval, {value}* extra_state,",
            f"    {value}* in, {value}* out, MPI_Fint* flag, MPI_Fint* ierror) {{",
            f"  *flag = 0;",
            f"  *ierror = MPI_SUCCESS;",
            f"}}",
            f"void mpi_{prefix}dup_fn_(MPI_Fint* old, MPI_Fint* keyval, {value}* extra_state,",
            f"    {value}* in, {value}* out, MPI_Fint* flag, MPI_Fint* ierror) {{",
            f"  *out = *in;",
            f"  *flag = 1;",
            f"  *ierror = MPI_SUCCESS;",
            f"}}",
            f"void mpi_{prefix}null_delete_fn_(MPI_Fint* object, MPI_Fint* keyval, {value}* value,",
            f"    {value}* extra_state, MPI_Fint* ierror) {{",
            f"  *ierror = MPI_SUCCESS;",
            f"}}",
            "",
        ]
    return out


def keyval_names():
    """The Fortran names of the predefined attribute callbacks (EXTERNAL in mpif.h)."""
    names = []
    for _, _, short, _ in KEYVAL_KINDS:
        prefix = f"{short}_".upper() if short else ""
        names += [f"MPI_{prefix}NULL_COPY_FN", f"MPI_{prefix}DUP_FN", f"MPI_{prefix}NULL_DELETE_FN"]
    return names


# MPI_SIZEOF (MPI-4.1 19.1.9): a generic over the intrinsic numeric types, scalars and arrays alike
# (assumed rank), giving the size of one element. (type, kind, bytes)
SIZEOF_TYPES = [("INTEGER", k, k) for k in (1, 2, 4, 8, 16)] + \
               [("REAL", k, k) for k in (4, 8, 10, 16)] + \
               [("COMPLEX", k, 2 * k) for k in (4, 8, 10, 16)] + \
               [("LOGICAL", k, k) for k in (1, 2, 4, 8)] + [("CHARACTER", 1, 1)]


def sizeof_text(f08):
    """The MPI_Sizeof generic: its interface lines and its procedures."""
    names = [f"weft_sizeof_{t.lower()}{k}" for t, k, _ in SIZEOF_TYPES]
    interface = ["  interface MPI_Sizeof"] + [f"    module procedure {n}" for n in names] + \
                ["  end interface"]
    ierror = "integer, optional, intent(out) :: ierror" if f08 else "integer, intent(out) :: ierror"
    set_ierror = "if (present(ierror)) ierror = 0" if f08 else "ierror = 0"
    procedures = []
    for (t, k, size), name in zip(SIZEOF_TYPES, names):
        # Only the argument's type matters; the unused dummy would draw a warning.
        procedures += [f"  subroutine {name}(x, size, ierror)",
                       f"    {t.lower()}(kind={k}" + (", len=*" if t == "CHARACTER" else "") +
                       "), dimension(..), intent(in) :: x",
                       f"    integer, intent(out) :: size", f"    {ierror}",
                       f"    size = {size} + 0 * rank(x)", f"    {set_ierror}",
                       f"  end subroutine {name}"]
    return interface, procedures


# OpenMP's Fortran interface (OpenMP 5.2, 19 and 20): weft's omp.h functions through bind(C)
# interfaces. LOGICAL results and arguments are C ints (gfortran's LOGICAL(4): 0 and 1).
OMP_LOGICAL = {"omp_in_parallel", "omp_get_dynamic", "omp_get_nested", "omp_in_final",
               "omp_get_cancellation", "omp_is_initial_device", "omp_test_lock"}
OMP_LOGICAL_ARGS = {"omp_set_dynamic", "omp_set_nested"}
OMP_KINDS = [("omp_lock_kind", 4), ("omp_nest_lock_kind", 16), ("omp_sched_kind", 4),
             ("omp_proc_bind_kind", 4), ("omp_sync_hint_kind", 4), ("omp_lock_hint_kind", 4),
             ("omp_pause_resource_kind", 4)]
OMP_ARGS = {"int": "INTEGER(4), VALUE", "omp_sched_t": "INTEGER(4), VALUE",
            "omp_sync_hint_t": "INTEGER(4), VALUE", "omp_pause_resource_t": "INTEGER(4), VALUE",
            "int*": "INTEGER(4)", "omp_sched_t*": "INTEGER(4)", "omp_lock_t*": "INTEGER(4)",
            "omp_nest_lock_t*": "INTEGER(16)"}
OMP_RESULTS = {"int": "INTEGER(4) FUNCTION", "double": "REAL(8) FUNCTION",
               "omp_proc_bind_t": "INTEGER(4) FUNCTION", "void": "SUBROUTINE"}


def omp_text(omp_h):
    out = ["! OpenMP's Fortran interface to weft's runtime (omp_bridge/), fixed or free form.",
           "! Generated by mpi/fortran/generate.py from include/omp.h: do not edit."]
    for name, kind in OMP_KINDS:
        out += [fixed(f"INTEGER {name}"), fixed(f"PARAMETER ({name}={kind})")]
    out += [fixed("INTEGER openmp_version"), fixed("PARAMETER (openmp_version=201511)")]
    for m in re.finditer(r"^  (omp_\w+) = (\d+),?$", omp_h, re.M):
        out += [fixed(f"INTEGER(4) {m.group(1)}"), fixed(f"PARAMETER ({m.group(1)}={m.group(2)})")]
    out.append(fixed("INTERFACE"))
    for m in re.finditer(r"^extern (int|double|void|omp_proc_bind_t) (omp_\w+)\(([^)]*)\)", omp_h, re.M):
        result, name, params = m.groups()
        types = [] if params == "void" else [t.strip() for t in params.split(",")]
        if any(t not in OMP_ARGS for t in types):
            continue
        kind = "LOGICAL(4) FUNCTION" if name in OMP_LOGICAL else OMP_RESULTS[result]
        args = [f"a{i}" for i in range(len(types))]
        out.append(fixed(f"{kind} {name}({', '.join(args)}) BIND(C,NAME='{name}')"))
        for a, t in zip(args, types):
            decl = "LOGICAL(4), VALUE" if name in OMP_LOGICAL_ARGS else OMP_ARGS[t]
            out.append(fixed(f"{decl} :: {a}"))
        out.append(fixed("END " + kind.split()[-1]))
    out.append(fixed("END INTERFACE"))
    return "\n".join(out) + "\n"


def omp_module_text():
    return ("! OpenMP's omp_lib module over weft's runtime: omp_lib.h's declarations.\n"
            "! Generated by mpi/fortran/generate.py: do not edit.\n"
            "module omp_lib\n  implicit none\n  include 'omp_lib.h'\nend module omp_lib\n")


LOGICALS = {"flag", "weighted", "commute", "reorder", "periods", "remain_dims"}
INTEGER_KINDS = {"int": "INTEGER", "MPI_Aint": "INTEGER(KIND=MPI_ADDRESS_KIND)",
                 "MPI_Count": "INTEGER(KIND=MPI_COUNT_KIND)",
                 "MPI_Offset": "INTEGER(KIND=MPI_OFFSET_KIND)"}


def fortran_declaration(base, name, suffix, f08_kinds):
    """The declaration of one dummy argument in the `mpi` module's interfaces, or in mpi_f08's
    (f08_kinds: the handle kinds, whose arguments are then TYPE(MPI_Comm)...)."""
    scalar = base.rstrip("*")
    array = bool(suffix) or name.startswith("array_of_") or name in ("periods", "remain_dims")
    if base in ("void*",):
        if f08_kinds:
            return f"TYPE(*), DIMENSION(..) :: {name}"
        return f"!GCC$ ATTRIBUTES NO_ARG_CHECK :: {name}\n TYPE(*), DIMENSION(*) :: {name}"
    if base in ("char*", "char"):
        return f"CHARACTER(LEN=*) :: {name}"
    if scalar == "MPI_Status":
        if f08_kinds:
            return f"TYPE(MPI_Status) :: {name}" + ("(*)" if array else "")
        if array:
            return f"INTEGER :: {name}(MPI_STATUS_SIZE, *)"
        return f"INTEGER :: {name}(MPI_STATUS_SIZE)"
    if f08_kinds and scalar in f08_kinds.by_type:
        return f"TYPE({scalar}) :: {name}" + ("(*)" if array else "")
    if suffix.count("[") == 2:
        return f"INTEGER :: {name}({suffix[suffix.index(']') + 2:-1]}, *)"
    if name in LOGICALS:
        kind = "LOGICAL"
    else:
        kind = INTEGER_KINDS.get(scalar, "INTEGER")  # handles are INTEGER
    return f"{kind} :: {name}" + ("(*)" if array else "")


def release(kind, handle):
    """Code that takes back the integer of a freed object (and a request's kept arrays)."""
    if kind == "request":
        return f"weft_f_release({handle}), weft_mpi_request_fortran_free({handle})"
    return f"weft_mpi_{kind}_fortran_free({handle})"


class Binding:
    """The Fortran-callable form of one C function, or why it has none."""

    def __init__(self, f, kinds, f08=False):
        self.f = f
        self.kinds = kinds
        self.f08 = f08  # the mpi_f08 form: buffers and strings as CFI descriptors, ierror optional
        # Info keys and values lose their leading blanks too (MPI-4.1 10).
        self.info = 1 if f.name.startswith("MPI_Info_") else 0
        self.decls, self.hidden, self.args, self.pre, self.post = [], [], [], [], []
        self.fortran = []  # (name, declaration in the mpi module's interface)
        self.final = []  # after every conversion back
        # A nonblocking or persistent call reads its arrays until it completes: converted ones are
        # kept with the request (fortran_support.h).
        self.request_out = any(p is not None and p.name == "request" and p.type == "MPI_Request*"
                               for p in f.params)
        self.reason = None
        names = {p.name for p in f.params if p is not None}
        self.length = next((n for n in LENGTHS if n in names), None)
        try:
            for p in f.params:
                self.param(p)
        except ValueError as e:
            self.reason = str(e)

    def param(self, p):
        if p is None:
            raise ValueError("variadic")
        t, n, s = p.type, p.name, p.suffix
        base = t.replace("const ", "")
        if self.f.name in MPI1_INTEGER_ADDRESSES and base.startswith("MPI_Aint"):
            self.integer_address(n, s, base.endswith("*") or bool(s))
            return
        if base in ("char*", "char**") and s:
            self.argument_vectors(base, n)
            return
        self.fortran.append((n, fortran_declaration(base, n, s, self.f08 and self.kinds)))
        if base in ("int", "MPI_Aint", "MPI_Count", "MPI_Offset") and not s:
            ft = "MPI_Fint" if base == "int" else base
            self.decls.append(f"{ft}* {n}")
            self.args.append(f"*{n}")
        elif base in ("int*", "MPI_Aint*", "MPI_Count*", "MPI_Offset*") or (
                base in ("int", "MPI_Aint") and s):
            ft = {"int": "MPI_Fint", "int*": "MPI_Fint"}.get(base, base.rstrip("*"))
            self.decls.append(f"{ft}* {n}")
            if "weights" in n:
                self.args.append(f"weft_f_weights({n})")
            elif n == "array_of_errcodes":
                self.args.append(f"weft_f_errcodes({n})")
            elif s.count("[") == 2:
                self.args.append(f"(int(*){s[s.index(']') + 1:]}){n}")
            else:
                self.args.append(n)
            if n == "index" and re.match(r"MPI_(Wait|Test)any$", self.f.name):
                self.post.append(f"if (rc == MPI_SUCCESS && *{n} >= 0) ++*{n};")
            if n == "array_of_indices":
                self.post.append(f"if (rc == MPI_SUCCESS && *outcount != MPI_UNDEFINED) "
                                 f"for (int i = 0; i < *outcount; ++i) ++{n}[i];")
        elif base in self.kinds.by_type and not s:
            name, _ = self.kinds.by_type[base]
            self.decls.append(f"MPI_Fint* {n}")
            self.args.append(f"MPI_{name}_f2c(*{n})")
        elif base.rstrip("*") in self.kinds.by_type and (base.endswith("*") or s):
            ctype = base.rstrip("*")
            name, kind = self.kinds.by_type[ctype]
            self.decls.append(f"MPI_Fint* {n}")
            inout = bool(INOUT.match(self.f.name)) and not t.startswith("const")
            if s or n.startswith("array_of_"):
                if self.f.name in GROUP_LENGTHS:
                    count = "weft_f_group_size(MPI_Comm_f2c(*comm))"
                elif self.length is None:
                    raise ValueError(f"the length of {n} is not an argument")
                else:
                    count = f"*{self.length}"
                self.pre.append(f"const int len_{n} = {count};")
                count = f"len_{n}"
                self.pre.append(f"{ctype}* c_{n} = weft_f_alloc({count}, sizeof(*c_{n}));")
                self.pre.append(f"for (int i = 0; i < {count}; ++i) c_{n}[i] = MPI_{name}_f2c({n}[i]);")
                self.args.append(f"c_{n}")
                if not t.startswith("const"):
                    loop = f"for (int i = 0; i < {count}; ++i) "
                    if inout:
                        self.pre.append(f"{ctype}* old_{n} = weft_f_alloc({count}, sizeof(*old_{n}));")
                        self.pre.append(f"memcpy(old_{n}, c_{n}, ({count} > 0 ? {count} : 0) * sizeof(*old_{n}));")
                        self.post.append(loop + f"if (c_{n}[i] != old_{n}[i]) {{ if (c_{n}[i] == NULL) "
                                         f"{release(kind, f'{n}[i]')}; "
                                         f"{n}[i] = MPI_{name}_c2f(c_{n}[i]); }}")
                        self.post.append(f"free(old_{n});")
                    else:
                        self.post.append(loop + f"{n}[i] = MPI_{name}_c2f(c_{n}[i]);")
                if t.startswith("const") and self.request_out:
                    self.final.append(f"weft_f_keep(rc, *request, c_{n});")
                else:
                    self.post.append(f"free(c_{n});")
            else:
                self.pre.append(f"{ctype} c_{n} = MPI_{name}_f2c(*{n});")
                self.args.append(f"&c_{n}")
                if inout:
                    # Unchanged (a persistent request, a committed type): no new holder.
                    self.pre.append(f"{ctype} old_{n} = c_{n};")
                    self.post.append(f"if (c_{n} != old_{n}) {{ if (c_{n} == NULL) "
                                     f"{release(kind, f'*{n}')}; *{n} = MPI_{name}_c2f(c_{n}); }}")
                else:
                    self.post.append(f"*{n} = MPI_{name}_c2f(c_{n});")
        elif base in ("MPI_Status*", "MPI_Status") and (base.endswith("*") or s):
            self.decls.append(f"MPI_Fint* {n}")
            if n.startswith("array_of_") or s:
                if self.length is None:
                    raise ValueError(f"the length of {n} is not an argument")
                self.pre.append(f"MPI_Status* c_{n} = weft_f_statuses_in({n}, *{self.length});")
                self.args.append(f"c_{n}")
                self.post.append(f"weft_f_statuses_out(c_{n}, {n}, *{self.length});")
            else:
                self.pre.append(f"MPI_Status s_{n}, *c_{n} = weft_f_status_in({n}, &s_{n});")
                self.args.append(f"c_{n}")
                if not t.startswith("const"):
                    self.post.append(f"weft_f_status_out(c_{n}, {n});")
        elif base in ("char*", "char") and (base.endswith("*") or s) and not (base.endswith("*") and s):
            if self.f08:
                self.decls.append(f"weft_cfi_head* {n}")
                if t.startswith("const"):
                    self.pre.append(f"char* c_{n} = weft_f_string_in({n}->base_addr, {n}->elem_len, {self.info});")
                    self.post.append(f"free(c_{n});")
                else:
                    self.pre.append(f"char* c_{n} = weft_f_string_buffer({n}->base_addr, {n}->elem_len);")
                    self.post.append(f"weft_f_string_out(c_{n}, {n}->base_addr, {n}->elem_len);")
                self.args.append(f"c_{n}")
                return
            self.hidden.append(f"size_t {n}_len")
            if t.startswith("const"):
                self.decls.append(f"const char* {n}")
                self.pre.append(f"char* c_{n} = weft_f_string_in({n}, {n}_len, {self.info});")
                self.post.append(f"free(c_{n});")
            else:
                self.decls.append(f"char* {n}")
                self.pre.append(f"char* c_{n} = weft_f_string_buffer({n}, {n}_len);")
                self.post.append(f"weft_f_string_out(c_{n}, {n}, {n}_len);")
            self.args.append(f"c_{n}")
        elif base in ("void*",) and n in BUFFERS:
            if self.f08 and KEEPS_BUFFER.match(self.f.name):
                self.decls.append(f"weft_cfi_head* {n}")
                self.args.append(f"weft_f08_buffer({n})")
            elif self.f08:
                self.decls.append(f"weft_cfi_head* {n}")
                self.pre.append(f"void* copy_{n};")
                self.pre.append(f"void* c_{n} = weft_f08_buffer_in({n}, &copy_{n});")
                self.args.append(f"c_{n}")
                output = 0 if t.startswith("const") else 1
                if self.request_out:
                    self.final.append(f"weft_f_keep_section(rc, *request, copy_{n}, {n}, {output});")
                else:
                    self.post.append(f"weft_f08_buffer_out({n}, copy_{n}, {output});")
            else:
                self.decls.append(f"{t} {n}")
                self.args.append(f"weft_f_buffer({n})")
        else:
            raise ValueError(f"{t} {n}{s}: no Fortran form yet")

    def argument_vectors(self, base, n):
        """MPI_COMM_SPAWN's argv (CHARACTER(LEN=*) argv(*), ended by a blank element) and
        MPI_COMM_SPAWN_MULTIPLE's commands (one per `count`) and argument vectors
        (array_of_argv(count, *): the vector of command i is row i): C arrays of C strings."""
        if base == "char**" or n == "argv":
            if n != "argv" and self.length is None:
                raise ValueError(f"the length of {n} is not an argument")
            rows = "1" if n == "argv" else f"*{self.length}"
            shape = "(*)" if n == "argv" else f"({self.length}, *)"
            what = "argv" if n == "argv" else "argvs"
        else:
            if self.length is None:
                raise ValueError(f"the length of {n} is not an argument")
            rows, shape, what = f"*{self.length}", "(*)", "strings"
        self.fortran.append((n, f"CHARACTER(LEN=*) :: {n}{shape}"))
        if self.f08:
            self.decls.append(f"weft_cfi_head* {n}")
            address, length = f"{n}->base_addr", f"{n}->elem_len"
        else:
            self.decls.append(f"const char* {n}")
            self.hidden.append(f"size_t {n}_len")
            address, length = n, f"{n}_len"
        ctype = "char***" if what == "argvs" else "char**"
        self.pre.append(f"{ctype} c_{n} = weft_f_{what}_in({address}, {length}, {rows});")
        self.args.append(f"c_{n}")
        if what == "argvs":
            self.post.append(f"weft_f_argvs_free(c_{n}, {rows});")
        else:
            self.post.append(f"weft_f_argv_free(c_{n});")

    def integer_address(self, n, s, pointer):
        """An MPI_Aint of an MPI-1 call, a default INTEGER in Fortran."""
        array = bool(s)
        self.fortran.append((n, f"INTEGER :: {n}" + ("(*)" if array else "")))
        self.decls.append(f"MPI_Fint* {n}")
        if array:
            self.pre.append(f"MPI_Aint* c_{n} = weft_f_alloc(*{self.length}, sizeof(MPI_Aint));")
            self.pre.append(f"for (int i = 0; i < *{self.length}; ++i) c_{n}[i] = {n}[i];")
            self.args.append(f"c_{n}")
            self.post.append(f"free(c_{n});")
        elif pointer:
            self.pre.append(f"MPI_Aint c_{n} = 0;")
            self.args.append(f"&c_{n}")
            self.post.append(f"*{n} = (MPI_Fint)c_{n};")
        else:
            self.args.append(f"(MPI_Aint)*{n}")

    def interface(self):
        """The function's explicit interface in the `mpi` module (ierror is required there)."""
        f = self.f
        names = [n for n, _ in self.fortran]
        decls = [d for _, d in self.fortran]
        bind = f" BIND(C, NAME='{f.name.lower()}_f08')" if self.f08 else ""
        if f.result in ("double", "MPI_Aint"):
            result = "DOUBLE PRECISION" if f.result == "double" else INTEGER_KINDS["MPI_Aint"]
            head, end = f"{result} FUNCTION {f.name}({', '.join(names)}){bind}", "END FUNCTION"
        else:
            head = f"SUBROUTINE {f.name}({', '.join(names + ['ierror'])}){bind}"
            end = "END SUBROUTINE"
            decls.append("INTEGER, OPTIONAL :: ierror" if self.f08 else "INTEGER :: ierror")
        body = ["IMPORT"] + [line.strip() for d in decls for line in d.split("\n")]
        return [head] + ["  " + b if not b.startswith("!") else b for b in body] + [end]

    def text(self):
        f = self.f
        lower = f.name.lower() + ("_f08" if self.f08 else "_")
        if f.result == "double" or f.result == "MPI_Aint":
            rtype = f.result
            params = ", ".join(self.decls) or "void"
            head = f"{rtype} p{lower}({params})"
            body = [f"  return P{f.name}({', '.join(self.args)});"]
        else:
            params = ", ".join(self.decls + ["MPI_Fint* ierror"] + self.hidden)
            head = f"void p{lower}({params})"
            body = ["  " + line for line in self.pre]
            body.append(f"  int rc = P{f.name}({', '.join(self.args)});")
            body += ["  " + line for line in self.post + self.final]
            body.append("  if (ierror != NULL) *ierror = rc;" if self.f08 else "  *ierror = rc;")
        return "\n".join([head + " {"] + body + ["}",
                          f"extern __typeof__(p{lower}) {lower} __attribute__((weak, alias(\"p{lower}\")));", ""])


# Written in custom_bindings.c.
CUSTOM = {"MPI_Init", "MPI_Init_thread", "MPI_Comm_set_attr", "MPI_Comm_get_attr",
          "MPI_Type_set_attr", "MPI_Type_get_attr", "MPI_Win_set_attr", "MPI_Win_get_attr",
          "MPI_Attr_put", "MPI_Attr_get", "MPI_Info_create_env", "MPI_Op_create",
          "MPI_Comm_create_keyval", "MPI_Type_create_keyval", "MPI_Win_create_keyval",
          "MPI_Keyval_create", "MPI_Info_get_string", "MPI_Comm_create_errhandler",
          "MPI_Win_create_errhandler", "MPI_Errhandler_create", "MPI_Alloc_mem",
          "MPI_Grequest_start"}


def bindings_of(functions, kinds):
    """The Binding of every function that has one, and (name, reason) of the others."""
    bound, unbound = [], []
    for f in functions.values():
        if f.name in CUSTOM:
            continue
        if f.name.startswith("MPI_T_") or f.result not in ("int", "double", "MPI_Aint"):
            unbound.append((f.name, "not in the Fortran bindings"))
            continue
        b = Binding(f, kinds)
        if b.reason:
            unbound.append((f.name, b.reason))
        else:
            bound.append(b)
            bound.append(Binding(f, kinds, f08=True))
    return bound, unbound


def bindings_text(bound, unbound):
    out = ["/* The Fortran-callable layer of weft's MPI (gfortran's conventions: lower-case names",
           " * with one underscore, every argument by reference, string lengths appended).",
           " * Generated by mpi/fortran/generate.py from include/mpi.h: do not edit. */",
           '#include "fortran_support.h"', ""]
    for name, common, _ in SPECIAL_F08:
        out.append(f"MPI_F08_status {common}_[1] __attribute__((aligned(16)));")
    for name, common, _, decl, size in SPECIAL:
        ctype = "char" if decl.startswith("CHARACTER") else "MPI_Fint"
        out.append(f"{ctype} {common}_[{size}] __attribute__((aligned(16)));  /* as gfortran aligns COMMON */")
    out.append("")
    for b in bound:
        out.append(b.text())
    out += keyval_text()
    out.append("/* Not bound yet:")
    out += [f" *   {name}: {why}" for name, why in unbound]
    out.append(" */")
    return "\n".join(out) + "\n"


def main():
    if len(sys.argv) != 3:
        raise SystemExit("usage: generate.py MPI_H OUT_DIR")
    mpi_h = Path(sys.argv[1]).read_text()
    out = Path(sys.argv[2])
    (out / "include").mkdir(parents=True, exist_ok=True)
    kinds = Kinds()
    functions = capi.read_functions(mpi_h)
    consts = constants(mpi_h, kinds)
    bound, unbound = bindings_of(functions, kinds)
    files = {
        "include/mpif.h": mpif_text(consts),
        "include/mpi.f90": module_text(consts, bound),
        "include/mpi_f08.f90": f08_module_text(consts, bound, kinds),
        "mpi_bindings.c": bindings_text(bound, unbound),
        "include/omp_lib.h": omp_text((ROOT / "include/omp.h").read_text()),
        "include/omp_lib.f90": omp_module_text(),
    }
    for name, text in files.items():
        path = out / name
        if not path.exists() or path.read_text() != text:
            path.write_text(text)


if __name__ == "__main__":
    main()
