# ctest driver for tokenizer_differential (and tokenizer_wordpiece_differential): NODE runs
# SCRIPT, which writes the reference -- tokenizers.js under node, the Rust crate under
# .venv's python -- for every tokenizer in TOKENIZERS (NAME=DIR;...), then
# tokenizer_diff_check compares.
# Extra tokenizers: set SURGE_EXTRA_TOKENIZERS=NAME=DIR;NAME=DIR in the environment.
if(DEFINED ENV{SURGE_EXTRA_TOKENIZERS})
  list(APPEND TOKENIZERS $ENV{SURGE_EXTRA_TOKENIZERS})
endif()
execute_process(COMMAND ${NODE} ${SCRIPT} ${OUT} ${TOKENIZERS} RESULT_VARIABLE node_result)
if(NOT node_result EQUAL 0)
  message(FATAL_ERROR "${SCRIPT} failed (${node_result}); are tests/node and .venv installed (scripts/setup.sh)?")
endif()
execute_process(COMMAND ${CHECKER} ${OUT} RESULT_VARIABLE check_result)
if(NOT check_result EQUAL 0)
  message(FATAL_ERROR "tokenizer differential check failed")
endif()
