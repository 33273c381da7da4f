# ctest driver for tokenizer_differential: node writes the tokenizers.js reference for
# every tokenizer in TOKENIZERS (NAME=DIR;...), then tokenizer_diff_check compares.
# Extra tokenizers: set SURGE_EXTRA_TOKENIZERS=NAME=DIR;NAME=DIR in the environment.
if(DEFINED ENV{SURGE_EXTRA_TOKENIZERS})
  list(APPEND TOKENIZERS $ENV{SURGE_EXTRA_TOKENIZERS})
endif()
execute_process(COMMAND ${NODE} ${SCRIPT} ${OUT} ${TOKENIZERS} RESULT_VARIABLE node_result)
if(NOT node_result EQUAL 0)
  message(FATAL_ERROR "tokenizers.js reference failed (${node_result}); is tests/node installed (scripts/setup.sh)?")
endif()
execute_process(COMMAND ${CHECKER} ${OUT} RESULT_VARIABLE check_result)
if(NOT check_result EQUAL 0)
  message(FATAL_ERROR "tokenizer differential check failed")
endif()
