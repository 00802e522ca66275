C     The Fortran 77 binding (mpif.h, fixed form): handles, statuses, strings, special addresses
C     and Fortran datatypes through weft's Fortran-callable layer. Prints " No Errors" on rank 0
C     when every check passes; each failed check is counted and reported.
      PROGRAM MPIFCALLS
      IMPLICIT NONE
      INCLUDE 'mpif.h'
      INTEGER IERR, RANK, NPROCS, ERRS, I, NEXT, PREV, COUNT
      INTEGER STATUS(MPI_STATUS_SIZE), STATUSES(MPI_STATUS_SIZE, 2)
      INTEGER REQS(2), SBUF(4), RBUF(4), VEC, DUP, SPLIT, INDX, MYOP
      INTEGER KEYVAL, DELETED, EH, CALLS, SEEN
      INTEGER(KIND=MPI_ADDRESS_KIND) EXTRA, ATTR
      EXTERNAL MYSUM, MYDELETE, MYHANDLER
      COMMON /DELETIONS/ DELETED
      COMMON /HANDLED/ CALLS, SEEN
      INTEGER FLAG, TOTAL, RLEN, INFO
      LOGICAL LFLAG, LIN, LOUT
      DOUBLE PRECISION DIN(3), DOUT(3)
      COMPLEX CIN, COUT
      DOUBLE PRECISION PIN(2), POUT(2)
      REAL RIN(2), ROUT(2)
      INTEGER IIN(2), IOUT(2)
      REAL*16 QIN, QOUT
      COMPLEX*32 ZIN, ZOUT
      INTEGER(KIND=MPI_ADDRESS_KIND) TAGUB
      CHARACTER*(MPI_MAX_OBJECT_NAME) NAME
      CHARACTER*(MPI_MAX_INFO_VAL) VALUE

      ERRS = 0
      CALL MPI_INIT(IERR)
      CALL MPI_COMM_RANK(MPI_COMM_WORLD, RANK, IERR)
      CALL MPI_COMM_SIZE(MPI_COMM_WORLD, NPROCS, IERR)
      NEXT = MOD(RANK + 1, NPROCS)
      PREV = MOD(RANK + NPROCS - 1, NPROCS)

C     A ring with requests, Waitall and an array of statuses.
      DO I = 1, 4
        SBUF(I) = RANK * 10 + I
        RBUF(I) = -1
      END DO
      CALL MPI_IRECV(RBUF, 4, MPI_INTEGER, PREV, 7, MPI_COMM_WORLD,
     &               REQS(1), IERR)
      CALL MPI_ISEND(SBUF, 4, MPI_INTEGER, NEXT, 7, MPI_COMM_WORLD,
     &               REQS(2), IERR)
      IF (REQS(1) .EQ. REQS(2) .OR. REQS(1) .EQ. MPI_REQUEST_NULL)
     &   ERRS = ERRS + 1
      CALL MPI_WAITALL(2, REQS, STATUSES, IERR)
      IF (REQS(1) .NE. MPI_REQUEST_NULL) ERRS = ERRS + 1
      IF (STATUSES(MPI_SOURCE, 1) .NE. PREV) ERRS = ERRS + 1
      IF (STATUSES(MPI_TAG, 1) .NE. 7) ERRS = ERRS + 1
      IF (RBUF(4) .NE. PREV * 10 + 4) ERRS = ERRS + 1
      CALL MPI_GET_COUNT(STATUSES(1, 1), MPI_INTEGER, COUNT, IERR)
      IF (COUNT .NE. 4) ERRS = ERRS + 1

C     Waitany's index counts from 1; MPI_STATUS_IGNORE.
      CALL MPI_IRECV(RBUF, 1, MPI_INTEGER, PREV, 8, MPI_COMM_WORLD,
     &               REQS(1), IERR)
      REQS(2) = MPI_REQUEST_NULL
      CALL MPI_SEND(RANK, 1, MPI_INTEGER, NEXT, 8, MPI_COMM_WORLD, IERR)
      CALL MPI_WAITANY(2, REQS, INDX, MPI_STATUS_IGNORE, IERR)
      IF (INDX .NE. 1 .OR. RBUF(1) .NE. PREV) ERRS = ERRS + 1

C     A derived type, freed: its handle comes back null.
      CALL MPI_TYPE_VECTOR(2, 1, 2, MPI_INTEGER, VEC, IERR)
      CALL MPI_TYPE_COMMIT(VEC, IERR)
      CALL MPI_SENDRECV(SBUF, 1, VEC, RANK, 9, RBUF, 2, MPI_INTEGER,
     &                  RANK, 9, MPI_COMM_WORLD, STATUS, IERR)
      IF (RBUF(1) .NE. SBUF(1) .OR. RBUF(2) .NE. SBUF(3))
     &   ERRS = ERRS + 1
      CALL MPI_TYPE_FREE(VEC, IERR)
      IF (VEC .NE. MPI_DATATYPE_NULL) ERRS = ERRS + 1

C     Reductions on Fortran types, and MPI_IN_PLACE.
      DO I = 1, 3
        DIN(I) = DBLE(RANK + I)
      END DO
      CALL MPI_ALLREDUCE(DIN, DOUT, 3, MPI_DOUBLE_PRECISION, MPI_SUM,
     &                   MPI_COMM_WORLD, IERR)
      IF (DOUT(3) .NE. DBLE(NPROCS * (NPROCS - 1) / 2 + 3 * NPROCS))
     &   ERRS = ERRS + 1
      TOTAL = RANK
      CALL MPI_ALLREDUCE(MPI_IN_PLACE, TOTAL, 1, MPI_INTEGER, MPI_SUM,
     &                   MPI_COMM_WORLD, IERR)
      IF (TOTAL .NE. NPROCS * (NPROCS - 1) / 2) ERRS = ERRS + 1
      LIN = RANK .EQ. 0
      CALL MPI_ALLREDUCE(LIN, LOUT, 1, MPI_LOGICAL, MPI_LOR,
     &                   MPI_COMM_WORLD, IERR)
      IF (.NOT. LOUT) ERRS = ERRS + 1
      CIN = CMPLX(1.0, REAL(RANK))
      CALL MPI_ALLREDUCE(CIN, COUT, 1, MPI_COMPLEX, MPI_SUM,
     &                   MPI_COMM_WORLD, IERR)
      IF (REAL(COUT) .NE. REAL(NPROCS)) ERRS = ERRS + 1

C     MAXLOC on the Fortran pair types; quadruple precision.
      PIN(1) = DBLE(MOD(RANK * 7, NPROCS))
      PIN(2) = DBLE(RANK)
      CALL MPI_ALLREDUCE(PIN, POUT, 1, MPI_2DOUBLE_PRECISION,
     &                   MPI_MAXLOC, MPI_COMM_WORLD, IERR)
      IF (POUT(1) .NE. DBLE(NPROCS - 1)) ERRS = ERRS + 1
      IF (MOD(NINT(POUT(2)) * 7, NPROCS) .NE. NPROCS - 1)
     &   ERRS = ERRS + 1
      RIN(1) = REAL(RANK)
      RIN(2) = REAL(RANK)
      CALL MPI_ALLREDUCE(RIN, ROUT, 1, MPI_2REAL, MPI_MINLOC,
     &                   MPI_COMM_WORLD, IERR)
      IF (ROUT(1) .NE. 0.0 .OR. ROUT(2) .NE. 0.0) ERRS = ERRS + 1
      IIN(1) = 5
      IIN(2) = RANK
      CALL MPI_ALLREDUCE(IIN, IOUT, 1, MPI_2INTEGER, MPI_MAXLOC,
     &                   MPI_COMM_WORLD, IERR)
      IF (IOUT(1) .NE. 5 .OR. IOUT(2) .NE. 0) ERRS = ERRS + 1
      QIN = 1.0Q0 / 3.0Q0
      CALL MPI_ALLREDUCE(QIN, QOUT, 1, MPI_REAL16, MPI_SUM,
     &                   MPI_COMM_WORLD, IERR)
      IF (ABS(QOUT - NPROCS / 3.0Q0) .GT. 1.0Q-30) ERRS = ERRS + 1
      ZIN = (1.0Q0, 2.0Q0)
      CALL MPI_ALLREDUCE(ZIN, ZOUT, 1, MPI_COMPLEX32, MPI_PROD,
     &                   MPI_COMM_WORLD, IERR)
      IF (ABS(ZOUT - ZIN ** NPROCS) .GT. 1.0Q-25) ERRS = ERRS + 1
      CALL MPI_TYPE_SIZE(MPI_REAL16, COUNT, IERR)
      IF (COUNT .NE. 16) ERRS = ERRS + 1

C     A reduction of the program's own: it gets the datatype as a Fortran handle.
      CALL MPI_OP_CREATE(MYSUM, .TRUE., MYOP, IERR)
      SBUF(1) = RANK + 1
      SBUF(2) = 1
      CALL MPI_ALLREDUCE(SBUF, RBUF, 2, MPI_INTEGER, MYOP,
     &                   MPI_COMM_WORLD, IERR)
      IF (RBUF(1) .NE. NPROCS * (NPROCS + 1) / 2) ERRS = ERRS + 1
      IF (RBUF(2) .NE. NPROCS) ERRS = ERRS + 1
      CALL MPI_OP_FREE(MYOP, IERR)
      IF (MYOP .NE. MPI_OP_NULL) ERRS = ERRS + 1

C     Communicators, names and attributes.
      CALL MPI_COMM_DUP(MPI_COMM_WORLD, DUP, IERR)
      CALL MPI_COMM_SET_NAME(DUP, 'fortran dup   ', IERR)
      CALL MPI_COMM_GET_NAME(DUP, NAME, RLEN, IERR)
      IF (NAME .NE. 'fortran dup' .OR. RLEN .NE. 11) ERRS = ERRS + 1
      CALL MPI_COMM_SPLIT(DUP, MOD(RANK, 2), RANK, SPLIT, IERR)
      CALL MPI_COMM_SIZE(SPLIT, COUNT, IERR)
      IF (COUNT .NE. (NPROCS + 1 - MOD(RANK, 2)) / 2) ERRS = ERRS + 1
      CALL MPI_COMM_FREE(SPLIT, IERR)
      IF (SPLIT .NE. MPI_COMM_NULL) ERRS = ERRS + 1
      CALL MPI_COMM_FREE(DUP, IERR)

C     A keyval with Fortran callbacks: MPI_COMM_DUP_FN copies the attribute to a duplicate, the
C     program's delete function counts the deletions.
      DELETED = 0
      EXTRA = 7
      CALL MPI_COMM_CREATE_KEYVAL(MPI_COMM_DUP_FN, MYDELETE, KEYVAL,
     &                            EXTRA, IERR)
      ATTR = 1000 + RANK
      CALL MPI_COMM_SET_ATTR(MPI_COMM_WORLD, KEYVAL, ATTR, IERR)
      CALL MPI_COMM_DUP(MPI_COMM_WORLD, DUP, IERR)
      ATTR = 0
      CALL MPI_COMM_GET_ATTR(DUP, KEYVAL, ATTR, LFLAG, IERR)
      IF (.NOT. LFLAG .OR. ATTR .NE. 1000 + RANK) ERRS = ERRS + 1
      CALL MPI_COMM_FREE(DUP, IERR)
      CALL MPI_COMM_DELETE_ATTR(MPI_COMM_WORLD, KEYVAL, IERR)
      IF (DELETED .NE. 2) ERRS = ERRS + 1
      CALL MPI_COMM_FREE_KEYVAL(KEYVAL, IERR)

      CALL MPI_COMM_GET_ATTR(MPI_COMM_WORLD, MPI_TAG_UB, TAGUB, LFLAG,
     &                       IERR)
      IF (.NOT. LFLAG .OR. TAGUB .LT. 32767) ERRS = ERRS + 1

C     Info strings.
      CALL MPI_INFO_CREATE(INFO, IERR)
      CALL MPI_INFO_SET(INFO, 'weft_key', 'a value  ', IERR)
      CALL MPI_INFO_GET(INFO, 'weft_key', MPI_MAX_INFO_VAL, VALUE,
     &                  LFLAG, IERR)
      IF (.NOT. LFLAG .OR. VALUE .NE. 'a value') ERRS = ERRS + 1
C     Fortran's buflen counts characters without C's terminator.
      COUNT = 3
      CALL MPI_INFO_GET_STRING(INFO, ' weft_key', COUNT, VALUE, LFLAG,
     &                         IERR)
      IF (.NOT. LFLAG .OR. COUNT .NE. 7 .OR. VALUE .NE. 'a v')
     &   ERRS = ERRS + 1
      CALL MPI_INFO_FREE(INFO, IERR)

C     A Fortran error handler gets the communicator as its integer.
      CALLS = 0
      CALL MPI_COMM_DUP(MPI_COMM_WORLD, DUP, IERR)
      CALL MPI_COMM_CREATE_ERRHANDLER(MYHANDLER, EH, IERR)
      CALL MPI_COMM_SET_ERRHANDLER(DUP, EH, IERR)
      CALL MPI_SEND(RANK, 1, MPI_INTEGER, NPROCS, 1, DUP, IERR)
      IF (CALLS .NE. 1 .OR. SEEN .NE. DUP) ERRS = ERRS + 1
      CALL MPI_ERRHANDLER_FREE(EH, IERR)
      CALL MPI_COMM_FREE(DUP, IERR)

C     Errors return their class.
      CALL MPI_COMM_SET_ERRHANDLER(MPI_COMM_WORLD, MPI_ERRORS_RETURN,
     &                             IERR)
      CALL MPI_SEND(RANK, 1, MPI_INTEGER, NPROCS, 1, MPI_COMM_WORLD,
     &              IERR)
      CALL MPI_ERROR_CLASS(IERR, FLAG, IERR)
      IF (FLAG .NE. MPI_ERR_RANK) ERRS = ERRS + 1

      CALL MPI_ALLREDUCE(MPI_IN_PLACE, ERRS, 1, MPI_INTEGER, MPI_SUM,
     &                   MPI_COMM_WORLD, IERR)
      IF (RANK .EQ. 0) THEN
        IF (ERRS .EQ. 0) THEN
          PRINT *, 'No Errors'
        ELSE
          PRINT *, 'Found', ERRS, 'errors'
        END IF
      END IF
      CALL MPI_FINALIZE(IERR)
      IF (ERRS .NE. 0) STOP 1
      END

C     INOUT = IN + INOUT, if the datatype is MPI_INTEGER (else a wrong result).
      SUBROUTINE MYSUM(IN, INOUT, LEN, TYPE)
      IMPLICIT NONE
      INCLUDE 'mpif.h'
      INTEGER LEN, TYPE, I
      INTEGER IN(LEN), INOUT(LEN)
      DO I = 1, LEN
        IF (TYPE .EQ. MPI_INTEGER) THEN
          INOUT(I) = IN(I) + INOUT(I)
        ELSE
          INOUT(I) = -1000
        END IF
      END DO
      END

C     Counts the deletions of attributes whose extra state is 7.
      SUBROUTINE MYDELETE(COMM, KEYVAL, VALUE, EXTRA, IERR)
      IMPLICIT NONE
      INCLUDE 'mpif.h'
      INTEGER COMM, KEYVAL, IERR, DELETED
      INTEGER(KIND=MPI_ADDRESS_KIND) VALUE, EXTRA
      COMMON /DELETIONS/ DELETED
      IF (EXTRA .EQ. 7) DELETED = DELETED + 1
      IERR = MPI_SUCCESS
      END

C     Counts its calls and keeps the communicator it was called for.
      SUBROUTINE MYHANDLER(COMM, CODE)
      IMPLICIT NONE
      INTEGER COMM, CODE, CALLS, SEEN
      COMMON /HANDLED/ CALLS, SEEN
      CALLS = CALLS + 1
      SEEN = COMM
      END
