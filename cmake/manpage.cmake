# brainlesslab.1 from the CLI's own help: `brainlesslab --help` lists the
# commands, `brainlesslab CMD --help` documents each. Run at build time:
#   cmake -DCLI=path/to/brainlesslab -DVERSION=x.y.z -DOUT=brainlesslab.1 -P manpage.cmake
execute_process(COMMAND ${CLI} --help OUTPUT_VARIABLE top RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "${CLI} --help failed (${rc})")
endif()

# roff: a leading dot or quote would be read as a request; backslashes escape.
function(bl_roff text out)
  string(REPLACE "\\" "\\e" text "${text}")
  string(REGEX REPLACE "(^|\n)([.'])" "\\1\\\\&\\2" text "${text}")
  set(${out} "${text}" PARENT_SCOPE)
endfunction()

string(TIMESTAMP today "%Y-%m-%d" UTC)
set(page ".TH BRAINLESSLAB 1 \"${today}\" \"brainlesslab ${VERSION}\" \"User Commands\"\n")
string(APPEND page ".SH NAME\nbrainlesslab \\- exact, fast, reproducible simulation of spiking networks on connectomes\n")
bl_roff("${top}" top_roff)
string(APPEND page ".SH SYNOPSIS\n.nf\n${top_roff}.fi\n")
string(APPEND page ".SH COMMANDS\n")
# The command names: the lines "  NAME  summary" after "commands:".
string(REGEX MATCHALL "\n  [a-z]+ " names "${top}")
foreach(n ${names})
  string(STRIP "${n}" cmd)
  execute_process(COMMAND ${CLI} ${cmd} --help OUTPUT_VARIABLE help RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${CLI} ${cmd} --help failed (${rc})")
  endif()
  bl_roff("${help}" help_roff)
  string(APPEND page ".SS ${cmd}\n.nf\n${help_roff}.fi\n")
endforeach()
string(APPEND page ".SH SEE ALSO\nThe README and docs/ of the source tree; pkg-config brainlesslab for the C library.\n")
file(WRITE ${OUT} "${page}")
