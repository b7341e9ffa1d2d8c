# A stand-in agent for `uspark run` tests. It writes each file named after `--`, prints a
# Claude-shaped stream-json record of the Write and its result, then ends as `how` says:
#   sh fake-agent.sh <how> -- file...
#   how: an exit code ("0", "3"); a signal to send itself ("SIGINT", "SIGTERM"); or
#        "on-SIGTERM": print "ready", wait, and do the writes in its SIGTERM handler, exit 143.
# A shell script, not Node: a Node agent costs each run another Node start (~80 ms of CPU). The
# file names go into the JSON as they are: they must need no escaping (the tests' temp paths do not).

how=$1
shift 2
id=0

# write_all <label> <file>...
write_all() {
  label=$1
  shift
  for file do
    printf '%s %s\n' "$label" "$file" > "$file"
    id=$((id + 1))
    printf '{"type":"assistant","session_id":"fake","message":{"content":[{"type":"tool_use","id":"toolu_%s","name":"Write","input":{"file_path":"%s","content":""}}]}}\n{"type":"user","session_id":"fake","message":{"content":[{"type":"tool_result","tool_use_id":"toolu_%s","content":"ok"}]}}\n' "$id" "$file" "$id"
  done
}

case $how in
  on-SIGTERM)
    trap 'write_all "last words" "$@"; kill "$pause" 2> /dev/null; exit 143' TERM
    # A pause holding none of our pipes: the run waits for its stdout to end.
    sleep 600 < /dev/null > /dev/null 2>&1 &
    pause=$!
    printf 'ready\n'
    wait "$pause"
    ;;
  SIG*)
    write_all before "$@"
    kill -s "${how#SIG}" $$
    ;;
  *)
    write_all written "$@"
    # Bytes no JSON reader likes, and no final newline: they must still reach uspark's stdout as they are.
    printf '\377\376\r\n\000A'
    exit "$how"
    ;;
esac
