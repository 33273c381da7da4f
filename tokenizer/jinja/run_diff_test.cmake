# Runs the Jinja differential test: node writes the cases, jinja_diff_check compares.
# Invoked by ctest as `cmake -DNODE=... -DSCRIPT=... -DCHECKER=... -DCASES=... -P this`.
execute_process(COMMAND ${NODE} ${SCRIPT} ${CASES} RESULT_VARIABLE node_result)
if(NOT node_result EQUAL 0)
  message(FATAL_ERROR "the reference case generator failed (${node_result})")
endif()
execute_process(COMMAND ${CHECKER} ${CASES} RESULT_VARIABLE check_result)
if(NOT check_result EQUAL 0)
  message(FATAL_ERROR "surge's renders differ from the reference (${check_result})")
endif()
