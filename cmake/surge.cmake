# Helpers that keep every module's CMakeLists.txt to a few lines.

# surge_library(NAME SOURCES a.cc b.cc DEPS surge_base ...)
function(surge_library name)
  cmake_parse_arguments(ARG "" "" "SOURCES;DEPS;PUBLIC_DEPS" ${ARGN})
  add_library(${name} STATIC ${ARG_SOURCES})
  target_include_directories(${name} PUBLIC ${SURGE_SOURCE_ROOT})
  target_link_libraries(${name} PUBLIC ${ARG_PUBLIC_DEPS} PRIVATE ${ARG_DEPS})
endfunction()

# surge_test(NAME SOURCES x_test.cc DEPS surge_x): a GoogleTest binary registered with ctest.
# Tests run with the repository root as working directory so they find models/ and tests/data.
# Test names get the binary's name as prefix ("kernels_test.MatMulTest.Small"), so that
# `ctest -R kernels` selects a module's tests.
function(surge_test name)
  cmake_parse_arguments(ARG "" "" "SOURCES;DEPS;LABELS" ${ARGN})
  add_executable(${name} ${ARG_SOURCES})
  target_link_libraries(${name} PRIVATE ${ARG_DEPS} GTest::gtest GTest::gtest_main GTest::gmock)
  gtest_discover_tests(${name}
    TEST_PREFIX "${name}."
    WORKING_DIRECTORY ${SURGE_SOURCE_ROOT}
    DISCOVERY_MODE PRE_TEST
    PROPERTIES LABELS "${ARG_LABELS}"
    EXTRA_ARGS --gtest_brief=1)
endfunction()

# surge_bench(NAME SOURCES x_bench.cc DEPS surge_x): a Google Benchmark binary (not a test).
function(surge_bench name)
  cmake_parse_arguments(ARG "" "" "SOURCES;DEPS" ${ARGN})
  add_executable(${name} ${ARG_SOURCES})
  target_link_libraries(${name} PRIVATE ${ARG_DEPS} benchmark::benchmark benchmark::benchmark_main)
  set_target_properties(${name} PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR})
endfunction()
