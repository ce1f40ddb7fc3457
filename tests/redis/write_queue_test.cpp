// write_queue: bounded, the oldest dropped first and counted; a batch taken
// counts as owed until sent or given back; one given back goes in front of
// newer writes and counts against the bound again; pushes from many
// threads lose nothing while there is room.
#include <boost/test/unit_test.hpp>

#include <numeric>  // std::iota
#include <thread>   // std::jthread
#include <vector>

#include "llmgate/server/shared/write_queue.hpp"

using llmgate::write_queue;

BOOST_AUTO_TEST_SUITE(write_queue_test)

BOOST_AUTO_TEST_CASE(pops_oldest_first_in_batches) {
  write_queue<int> queue(10);
  BOOST_TEST(queue.push(1));  // empty before: the consumer needs waking
  BOOST_TEST(!queue.push(2));
  BOOST_TEST(!queue.push(3));
  BOOST_TEST(queue.pop(2) == (std::vector<int>{1, 2}), boost::test_tools::per_element());
  BOOST_TEST(queue.pop(5) == (std::vector<int>{3}), boost::test_tools::per_element());
  BOOST_TEST(queue.pop(5).empty());
  BOOST_TEST(queue.push(4));
  BOOST_TEST(queue.dropped() == 0u);
}

BOOST_AUTO_TEST_CASE(a_full_queue_drops_the_oldest_and_counts_them) {
  write_queue<int> queue(3);
  for (int i = 0; i < 10; ++i) queue.push(i);
  BOOST_TEST(queue.size() == 3u);
  BOOST_TEST(queue.dropped() == 7u);
  BOOST_TEST(queue.pop(10) == (std::vector<int>{7, 8, 9}), boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(a_batch_taken_is_owed_until_sent) {
  write_queue<int> queue(10);
  for (int i = 0; i < 5; ++i) queue.push(i);
  auto batch = queue.pop(3);
  BOOST_TEST(queue.size() == 5u);
  queue.sent(batch.size());
  BOOST_TEST(queue.size() == 2u);
  queue.pop(10);
  queue.sent(2);
  BOOST_TEST(queue.size() == 0u);
}

BOOST_AUTO_TEST_CASE(a_batch_given_back_is_oldest_and_bounded) {
  write_queue<int> queue(4);
  for (int i = 0; i < 4; ++i) queue.push(i);
  auto batch = queue.pop(3);  // 0 1 2 taken, 3 waiting
  queue.push(4);
  queue.push(5);  // 3 4 5
  BOOST_TEST(queue.size() == 6u);
  queue.give_back(std::move(batch));  // 0 1 2 3 4 5: the two oldest go
  BOOST_TEST(queue.dropped() == 2u);
  BOOST_TEST(queue.size() == 4u);
  BOOST_TEST(queue.pop(10) == (std::vector<int>{2, 3, 4, 5}), boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(zero_capacity_holds_one) {
  write_queue<int> queue(0);
  queue.push(1);
  queue.push(2);
  BOOST_TEST(queue.capacity() == 1u);
  BOOST_TEST(queue.pop(5) == (std::vector<int>{2}), boost::test_tools::per_element());
  BOOST_TEST(queue.dropped() == 1u);
}

BOOST_AUTO_TEST_CASE(pushes_from_many_threads_keep_each_writers_order) {
  constexpr int writers = 4, each = 5000;
  write_queue<int> queue(writers * each);
  std::vector<int> received;
  {
    std::vector<std::jthread> threads;
    for (int w = 0; w < writers; ++w)
      threads.emplace_back([&, w] {
        for (int i = 0; i < each; ++i) queue.push(w * each + i);
      });
    std::jthread consumer([&] {
      while (received.size() < std::size_t{writers * each}) {
        const auto batch = queue.pop(64);
        received.insert(received.end(), batch.begin(), batch.end());
        queue.sent(batch.size());
      }
    });
  }
  BOOST_TEST(queue.dropped() == 0u);
  BOOST_TEST(queue.size() == 0u);
  std::vector<int> last(writers, -1);
  for (int v : received) {
    BOOST_TEST(v > last[v / each]);
    last[v / each] = v;
  }
  BOOST_TEST(received.size() == std::size_t{writers * each});
}

BOOST_AUTO_TEST_SUITE_END()
