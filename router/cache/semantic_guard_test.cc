// The lexical guard (numbers, negation, entities, swapped words, roles) and the query's normal form.
#include "router/cache/semantic_guard.h"

#include <gtest/gtest.h>

namespace surge::router {
namespace {

TEST(SemanticGuardTest, NormalizationCollapsesSpaceCaseAndEndPunctuation) {
  EXPECT_EQ(CollapseWhitespace("  How do\tI\n\n reset   it? "), "How do I reset it?");
  EXPECT_EQ(NormalizeQueryText("  How do I Reset my PASSWORD?!  "), "how do i reset my password");
  EXPECT_EQ(NormalizeQueryText("...?"), "");
  EXPECT_EQ(NormalizeQueryText("Version 3.5."), "version 3.5");
}

TEST(SemanticGuardTest, ParaphrasesAgree) {
  EXPECT_TRUE(GuardAgrees("How do I reset my password?", "What's the way to reset my password"));
  EXPECT_TRUE(GuardAgrees("What is the capital of France?", "Tell me the capital city of France."));
  EXPECT_TRUE(GuardAgrees("Can I return 2 items?", "Is it possible to return two items?"));
  EXPECT_TRUE(GuardAgrees("Paris hotels near the river", "Hotels near the river?"));  // sentence start: not an entity
}

TEST(SemanticGuardTest, NumbersMustBeEqualMultisets) {
  // One content word swapped, the rest the same: another question.
  EXPECT_FALSE(GuardAgrees("How do I cancel my subscription?", "How do I renew my subscription?"));
  EXPECT_FALSE(GuardAgrees("How many calories are in an apple?", "How many calories are in a banana?"));
  EXPECT_TRUE(GuardAgrees("How do I cancel my subscription?", "How can I cancel my subscription"));  // function words
  EXPECT_TRUE(GuardAgrees("How do I cancel my subscription?", "What is the way to cancel a subscription?"));
  EXPECT_TRUE(GuardAgrees("Opening hours on weekends?", "Opening hours at the weekend?"));  // plural: one word
  EXPECT_FALSE(GuardAgrees("Can I return 2 items?", "Can I return 3 items?"));
  EXPECT_FALSE(GuardAgrees("Convert 5 miles to km", "Convert 5 5 miles to km"));
  EXPECT_TRUE(GuardAgrees("Is 1,000 dollars enough?", "Is 1000 dollars enough"));
  EXPECT_FALSE(GuardAgrees("Is 3.5 enough?", "Is 3 enough?"));
  EXPECT_FALSE(GuardAgrees("I need one ticket", "I need two tickets"));
  EXPECT_EQ(ExtractGuardFeatures("from 10 to 2.50, 1,000 or 7.").numbers,
            (std::vector<std::string>{"10", "1000", "2.50", "7"}));
}

TEST(SemanticGuardTest, NegationMustBeOnBothSidesOrNeither) {
  EXPECT_FALSE(GuardAgrees("How do I reset my password?", "How do I not reset my password?"));
  EXPECT_FALSE(GuardAgrees("Why does it work?", "Why doesn't it work?"));
  EXPECT_FALSE(GuardAgrees("Why does it work?", "Why doesn\xE2\x80\x99t it work?"));  // a typographic apostrophe
  EXPECT_FALSE(GuardAgrees("Tea with sugar", "Tea without sugar"));
  EXPECT_TRUE(GuardAgrees("Why doesn't it work?", "Why does it never work?"));  // both negated
  EXPECT_FALSE(GuardAgrees("I can log in", "I cannot log in"));
}

TEST(SemanticGuardTest, NamedEntitiesMustBeEqual) {
  EXPECT_FALSE(GuardAgrees("What is the capital of France?", "What is the capital of Germany?"));
  EXPECT_FALSE(GuardAgrees("Does it run on iPhone?", "Does it run on the phone?"));  // inner capital
  EXPECT_FALSE(GuardAgrees("USA visa rules", "UK visa rules"));                    // all caps at the start
  EXPECT_TRUE(GuardAgrees("Is I the right pronoun?", "Is I the right pronoun here?"));
  EXPECT_FALSE(GuardAgrees("capital of france", "capital of France"));  // documented: errs towards a miss
  EXPECT_EQ(ExtractGuardFeatures("Flights to Tokyo. Tokyo is far, said Anna").entities,
            (std::vector<std::string>{"anna", "tokyo"}));
}

TEST(SemanticGuardTest, RolesMustNotBeSwapped) {
  EXPECT_FALSE(GuardAgrees("Is there a direct flight from Seattle to Tokyo?",
                           "Is there a direct flight from Tokyo to Seattle?"));
  EXPECT_FALSE(GuardAgrees("Do children pay less than adults?", "Do adults pay less than children?"));
  EXPECT_FALSE(GuardAgrees("Downgrade from version 5 to version 4", "Downgrade from version 4 to version 5"));
  EXPECT_FALSE(GuardAgrees("How long does a wire transfer to Germany take?",
                           "How long does a wire transfer from Germany take?"));
  EXPECT_FALSE(GuardAgrees("Move my savings into my checking", "Move my checking into my savings"));
  // Same order, or the direction word on one side only (an infinitive "to"): agree.
  EXPECT_TRUE(GuardAgrees("How do I fly from Seattle to Tokyo?", "How can I fly from Seattle to Tokyo"));
  EXPECT_TRUE(GuardAgrees("How do I transfer money from savings?", "How to transfer money from savings?"));
  EXPECT_TRUE(GuardAgrees("Can I pay in three installments?", "Can I pay in 3 installments?"));
  EXPECT_TRUE(GuardAgrees("Move money from savings into checking", "Move money from savings to checking"));  // = to
  EXPECT_TRUE(GuardAgrees("Go back from version 5 to version 4", "Downgrade from version 5 to version 4"));
  EXPECT_TRUE(GuardAgrees("What are the roaming charges in Europe?", "What do you charge for roaming in Europe?"));
  EXPECT_TRUE(GuardAgrees("When does the Boston train leave?", "When does the train to Boston leave?"));
  const GuardFeatures features = ExtractGuardFeatures("Send 2 boxes from my home to the office");
  EXPECT_EQ(features.terms, (std::vector<std::string>{"send", "2", "boxe", "home", "office"}));
  EXPECT_EQ(features.directions,
            (std::vector<std::pair<std::string, std::string>>{{"home", "from"}, {"office", "to"}}));
}

}  // namespace
}  // namespace surge::router
