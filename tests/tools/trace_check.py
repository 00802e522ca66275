#!/usr/bin/env python3
"""Validates what weftrun --trace and weft-info write (tests/tools/trace_checks.sh).

  trace_check.py json FILE PROCESSES KIND...   the JSON parses; B/E slices nest on every track
                                               and close; each pid 0..PROCESSES-1 has tracks; each
                                               KIND (a category, or flow:NAME) occurs; KIND
                                               in-mpi:NAME: each end of a flow NAME lies inside
                                               an MPI call's slice of its track (where its time,
                                               interpolated between the timed events around it,
                                               must fall)
  trace_check.py pingpong FILE ROUNDS          tests/programs/trace_pingpong.c's trace: each
                                               round's send of each rank begins no later than the
                                               other rank's receive of it ends, each message's
                                               flow starts no later than that receive ends and
                                               ends no earlier than it starts
  trace_check.py summary FILE                  weft-info trace-summary's output: utilization in
                                               [0, 1], each rank's MPI time within its run time
  trace_check.py svg FILE THREADS              the SVG parses as XML with THREADS thread elements
  trace_check.py timeline FILE                 the trace's SVG drawing parses and shows ranks and
                                               MPI calls
  trace_check.py messages FILE RANKS TAGS      otf2-print's listing: each MPI_SEND has an MPI_RECV
                                               of the same communicator, tag and length; the ring
                                               of examples/hybrid.c (tags 0..TAGS-1, 4 bytes, on
                                               MPI_COMM_WORLD) names each of RANKS ranks once per
                                               tag as a receiver and once as a sender
  trace_check.py comms PRINT DEFS RANKS        otf2-print's listing and its -G definitions of
                                               tests/programs/trace_comms.c's job: every
                                               communicator its messages name has a group (two
                                               for an intercommunicator), and each record's peer,
                                               a rank of that group, is the world rank the
                                               message's tag names; every kind of communicator
                                               carried its messages
"""
import collections
import json
import re
import sys
import xml.etree.ElementTree as ElementTree


def fail(message):
    print("FAILED: " + message, file=sys.stderr)
    sys.exit(1)


def check_json(path, processes, kinds):
    with open(path) as f:
        trace = json.load(f)
    events = trace["traceEvents"]
    stacks = {}
    last_time = {}
    seen = set()
    pids = set()
    flows = {}
    in_mpi = {kind[len("in-mpi:"):] for kind in kinds if kind.startswith("in-mpi:")}
    kinds = [kind for kind in kinds if not kind.startswith("in-mpi:")]
    for event in events:
        ph = event["ph"]
        if ph == "M":
            continue
        track = (event["pid"], event["tid"])
        pids.add(event["pid"])
        time = float(event["ts"])
        if time < last_time.get(track, 0.0):
            fail("track %s goes back in time at %s" % (track, time))
        last_time[track] = time
        stack = stacks.setdefault(track, [])
        if ph == "B":
            stack.append(event["cat"])
            seen.add(event["cat"])
            if event["cat"] in ("thread", "mpi"):
                seen.add(event["name"].split(" ")[0])
        elif ph == "E":
            if not stack:
                fail("track %s ends a slice it never began at %s" % (track, time))
            stack.pop()
        elif ph in ("s", "f"):
            flows.setdefault((event["name"], event["id"]), set()).add(ph)
            if event["name"] in in_mpi and "mpi" not in stack:
                fail("flow %s %s at %s on track %s lies in no MPI call (open: %s)" %
                     (event["name"], ph, time, track, stack))
            seen.add("flow:" + event["name"])
        elif ph == "i":
            seen.add(event["cat"])
    for track, stack in stacks.items():
        if stack:
            fail("track %s leaves %s open" % (track, stack))
    for key, ends in flows.items():
        if ends != {"s", "f"}:
            fail("flow %s has only %s" % (key, ends))
    if pids != set(range(processes)):
        fail("pids %s; expected 0..%d" % (sorted(pids), processes - 1))
    for kind in kinds:
        if kind not in seen:
            fail("no %s in %s (saw %s)" % (kind, path, sorted(seen)))
    print("ok: %d events on %d tracks, %d flows" % (len(events), len(stacks), len(flows)))


def check_pingpong(path, rounds):
    with open(path) as f:
        events = json.load(f)["traceEvents"]
    spans = {}  # span id -> [rank, name, begin, end]
    stacks = {}
    flows = []  # (ph, id, tag, time, rank of the enclosing span)
    for event in events:
        if event["ph"] == "M":
            continue
        track = (event["pid"], event["tid"])
        stack = stacks.setdefault(track, [])
        time = float(event["ts"])
        if event["ph"] == "B":
            span = None
            if event["cat"] == "mpi" and event["name"] in ("MPI_Send", "MPI_Recv"):
                span = event["args"]["span"]
                entry = spans.setdefault(span, [event["args"]["rank"], event["name"], time, time])
                entry[2] = min(entry[2], time)
            stack.append((span, event["args"]["rank"]))
        elif event["ph"] == "E":
            span, _ = stack.pop()
            if span is not None:
                spans[span][3] = max(spans[span][3], time)
        elif event["ph"] in ("s", "f") and event["cat"] == "message":
            rank = stack[-1][1] if stack else -1
            # A message by its sender and tag (unique here): its id is a queued message's
            # address, which later messages reuse.
            sender = rank if event["ph"] == "s" else event["args"]["peer"]
            flows.append((event["ph"], (sender, event["args"]["tag"]), event["args"]["tag"], time,
                          rank))
    calls = collections.defaultdict(list)
    for span_id in sorted(spans):
        rank, name, begin, end = spans[span_id]
        calls[(rank, name)].append((begin, end))
    for key in ((0, "MPI_Send"), (0, "MPI_Recv"), (1, "MPI_Send"), (1, "MPI_Recv")):
        if len(calls[key]) != rounds:
            fail("rank %d made %d %s calls in the trace; expected %d" % (key[0], len(calls[key]),
                                                                          key[1], rounds))
        calls[key].sort()
    for i in range(rounds):
        for sender in (0, 1):
            begin = calls[(sender, "MPI_Send")][i][0]
            end = calls[(1 - sender, "MPI_Recv")][i][1]
            if begin > end:
                fail("round %d: rank %d's MPI_Send begins at %.3f, after rank %d's MPI_Recv of it "
                     "ends at %.3f" % (i, sender, begin, 1 - sender, end))
    starts = {}
    for ph, flow, tag, time, rank in flows:
        if ph == "s" and rank in (0, 1) and 0 <= tag < rounds:
            starts[flow] = time
            end = calls[(1 - rank, "MPI_Recv")][tag][1]
            if time > end:
                fail("round %d: rank %d's message starts at %.3f, after rank %d's MPI_Recv of it "
                     "ends at %.3f" % (tag, rank, time, 1 - rank, end))
    checked = 0
    for ph, flow, tag, time, rank in flows:
        if ph == "f" and flow in starts:
            checked += 1
            if time < starts[flow]:
                fail("message %s (tag %d) ends at %.3f, before it starts at %.3f" %
                     (flow, tag, time, starts[flow]))
    if checked < 2 * rounds:
        fail("%d messages of the ping-pong have both ends; expected %d" % (checked, 2 * rounds))
    print("ok: %d rounds, %d messages" % (rounds, checked))


def check_summary(path):
    text = open(path).read()
    utilizations = [float(u) for u in re.findall(r"utilization (\S+)", text)]
    if not utilizations:
        fail("no per-core utilization in\n" + text)
    for u in utilizations:
        if not 0.0 <= u <= 1.0:
            fail("utilization %s outside [0, 1]" % u)
    if max(utilizations) <= 0.0:
        fail("every core idle:\n" + text)
    rows = re.findall(r"^\s+(\d+)\s+(\d+)\s+(\S+)\s+(\S+)\s+(\S+)\s+(\S+)\s*$", text, re.M)
    if not rows:
        fail("no rank rows in\n" + text)
    for process, rank, run, running, mpi, waiting in rows:
        run, running, mpi, waiting = map(float, (run, running, mpi, waiting))
        slack = 1e-6
        if not (0 <= waiting <= mpi + slack and mpi <= run + slack and running <= run + slack):
            fail("rank %s of process %s: run %s, on a core %s, in MPI %s, waiting %s" %
                 (rank, process, run, running, mpi, waiting))
    print("ok: %d cores, %d ranks" % (len(utilizations), len(rows)))


def check_svg(path, threads):
    root = ElementTree.parse(path).getroot()
    ns = "{http://www.w3.org/2000/svg}"
    found = [g for g in root.iter(ns + "g") if g.get("class") == "thread"]
    if len(found) != threads:
        fail("%d thread elements in %s; expected %d" % (len(found), path, threads))
    cores = {g.get("data-core") for g in root.iter(ns + "g") if g.get("class") == "core"}
    for g in found:
        if g.get("data-core") not in cores:
            fail("a thread on core %s, which is not drawn" % g.get("data-core"))
    print("ok: %d threads on %d cores" % (len(found), len(cores)))


def check_timeline(path):
    root = ElementTree.parse(path).getroot()
    bars = [r for r in root.iter("{http://www.w3.org/2000/svg}rect") if r.find(
        "{http://www.w3.org/2000/svg}title") is not None]
    names = {r.find("{http://www.w3.org/2000/svg}title").text for r in bars}
    if not any(n.startswith("rank ") for n in names) or not any(n.startswith("MPI_") for n in names):
        fail("the timeline %s lacks ranks or MPI calls (%s)" % (path, sorted(names)[:10]))
    print("ok: %d bars" % len(bars))


def check_messages(path, ranks, tags):
    pattern = re.compile(r"^(MPI_SEND|MPI_RECV) .*(Receiver|Sender): (\d+).*, Communicator: (.*), "
                         r"Tag: (\d+), Length: (\d+)")
    records = {"MPI_SEND": [], "MPI_RECV": []}
    with open(path) as listing:
        for line in listing:
            m = pattern.match(line)
            if m:
                records[m.group(1)].append((int(m.group(3)), m.group(4), int(m.group(5)),
                                            int(m.group(6))))
    sends, recvs = records["MPI_SEND"], records["MPI_RECV"]
    if not sends:
        fail("%s lists no MPI_SEND" % path)
    unmatched = collections.Counter(r[1:] for r in sends)
    unmatched.subtract(collections.Counter(r[1:] for r in recvs))
    differ = {k: v for k, v in unmatched.items() if v != 0}
    if differ:
        fail("MPI_SEND and MPI_RECV differ (communicator, tag, length: sends less receives): %s"
             % sorted(differ.items())[:10])
    for tag in range(tags):
        for name, listed in (("receivers", sends), ("senders", recvs)):
            peers = sorted(r[0] for r in listed if r[2] == tag and r[3] == 4
                           and "MPI_COMM_WORLD" in r[1])
            if peers != list(range(ranks)):
                fail("the ring's messages of tag %d name the %s %s; expected %s"
                     % (tag, name, peers, list(range(ranks))))
    print("ok: %d MPI_SEND, %d MPI_RECV" % (len(sends), len(recvs)))


def parse_definitions(path):
    """Groups (ref -> (type, members)) and communicators (ref -> (name, [group refs])) of an
    otf2-print -G listing; members of a COMM_GROUP are ranks of the COMM_LOCATIONS group."""
    groups, comms = {}, {}
    with open(path) as listing:
        for line in listing:
            m = re.match(r"^GROUP\s+(\d+)\s+Name: .*?, Type: (\w+), .*?(\d+) Members:?(.*)$", line)
            if m:
                members = [int(x) for x in re.findall(r"(?:^\s*|, )(\d+) \(", m.group(4))]
                groups[int(m.group(1))] = (m.group(2), members)
                continue
            m = re.match(r'^COMM\s+(\d+)\s+Name: "([^"]*)" <\d+>, Group: (?:"[^"]*" <(\d+)>|UNDEFINED)',
                         line)
            if m:
                comms[int(m.group(1))] = (m.group(2), [] if m.group(3) is None
                                          else [int(m.group(3))])
                continue
            m = re.match(r'^INTER_COMM\s+(\d+)\s+name: "([^"]*)" <\d+>, Group A: (?:"[^"]*" <(\d+)>|'
                         r'UNDEFINED), Group B: (?:"[^"]*" <(\d+)>|UNDEFINED)', line)
            if m:
                refs = [int(g) for g in (m.group(3), m.group(4)) if g is not None]
                comms[int(m.group(1))] = (m.group(2), refs if len(refs) == 2 else [])
    return groups, comms


def check_comms(print_path, defs_path, ranks):
    groups, comms = parse_definitions(defs_path)
    pattern = re.compile(r"^(MPI_SEND|MPI_RECV) .*(?:Receiver|Sender): (\d+) .*Communicator: "
                         r'"([^"]*)" <(\d+)>, Tag: (\d+), Length: (\d+)')
    kinds = collections.Counter()
    checked = 0
    with open(print_path) as listing:
        for line in listing:
            m = pattern.match(line)
            if not m:
                continue
            record, peer, name, ref, tag, length = (m.group(1), int(m.group(2)), m.group(3),
                                                    int(m.group(4)), int(m.group(5)),
                                                    int(m.group(6)))
            # trace_comms.c's own messages: tag = kind * 4096 + sender * 64 + receiver, 4 bytes;
            # the rest is the traffic of collectives and communicator creation.
            if length != 4 or not 0 < tag < 8 * 4096:
                continue
            kind, sender, receiver = tag // 4096, tag // 64 % 64, tag % 64
            me, other = (sender, receiver) if record == "MPI_SEND" else (receiver, sender)
            if ref not in comms:
                fail("%s names communicator %d, which is not defined" % (line.strip(), ref))
            comm_name, group_refs = comms[ref]
            if not group_refs or any(g not in groups for g in group_refs):
                fail("communicator %s (%d) has no group, yet %s names it" % (comm_name, ref,
                                                                             line.strip()))
            if (len(group_refs) == 2) != (kind == 6):
                fail("kind %d's message on %s: expected %s" % (
                    kind, comm_name, "an intercommunicator" if kind == 6 else "one group"))
            if len(group_refs) == 2:
                a, b = (groups[g][1] for g in group_refs)
                if me in a and other in b:
                    remote = b
                elif me in b and other in a:
                    remote = a
                else:
                    fail("%s: world ranks %d and %d are not on two sides of %s (%s, %s)" %
                         (line.strip(), me, other, comm_name, a, b))
                if peer >= len(remote) or remote[peer] != other:
                    fail("%s: peer %d of %s's remote group %s is not world rank %d" %
                         (line.strip(), peer, comm_name, remote, other))
            else:
                kind_of_group, members = groups[group_refs[0]]
                if kind_of_group == "COMM_SELF":
                    if peer != 0 or me != other or kind != 1:
                        fail("%s: on %s, a COMM_SELF communicator" % (line.strip(), comm_name))
                elif me not in members or peer >= len(members) or members[peer] != other:
                    fail("%s: peer %d of %s's group %s is not world rank %d (and %d a member)" %
                         (line.strip(), peer, comm_name, members, other, me))
            kinds[(kind, record)] += 1
            checked += 1
    # Per kind, the messages of its ring: every rank's, a half's for the odd or even ranks.
    expected = {0: ranks, 1: ranks, 2: ranks, 3: ranks, 4: ranks // 2, 5: ranks // 2, 6: ranks,
                7: ranks}
    for kind, count in expected.items():
        for record in ("MPI_SEND", "MPI_RECV"):
            if kinds[(kind, record)] != count:
                fail("%d %s records of kind %d; expected %d" % (kinds[(kind, record)], record,
                                                                 kind, count))
    print("ok: %d records on %d communicators" % (checked, len(comms)))


def main():
    mode = sys.argv[1]
    if mode == "json":
        check_json(sys.argv[2], int(sys.argv[3]), sys.argv[4:])
    elif mode == "pingpong":
        check_pingpong(sys.argv[2], int(sys.argv[3]))
    elif mode == "summary":
        check_summary(sys.argv[2])
    elif mode == "timeline":
        check_timeline(sys.argv[2])
    elif mode == "comms":
        check_comms(sys.argv[2], sys.argv[3], int(sys.argv[4]))
    elif mode == "messages":
        check_messages(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]))
    elif mode == "svg":
        check_svg(sys.argv[2], int(sys.argv[3]))
    else:
        fail("unknown mode " + mode)


main()
