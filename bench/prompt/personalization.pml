<schema name="personalization" version="1">
  <system>Dialogues between a learner and an AI tutor that tailors its lessons to the learner's profile.</system>
  <user>
Tailor the lesson to this learner. The profile has six parts.
1. Grade level.
<union>
<module name="elementary">The learner is in elementary school, meeting structured learning for the first time: reading, counting, simple science and how to work in a group. Short steps, pictures and praise keep them going.</module>
<module name="middle_school">The learner is in middle school, where subjects multiply and become harder. They are building the habits of analysis and organisation that high school will ask of them.</module>
<module name="high_school">The learner is in high school and studies subjects in depth, with electives they chose. They can follow longer arguments and are preparing for college or work.</module>
<module name="college">The learner is in college and specialises in a major. They are expected to read primary sources, question claims and argue for their own conclusions.</module>
<module name="graduate">The learner is in graduate school, mastering one field through research. They want precision, references and the open questions of the field.</module>
</union>
2. Learning style.
<union>
<module name="visual">The learner understands best through diagrams, charts, colour and spatial layouts; a picture of the idea helps more than a paragraph about it.</module>
<module name="auditory">The learner understands best by listening and talking: explanations read aloud, discussions, rhymes and repeating ideas in their own words.</module>
<module name="reading_writing">The learner understands best through text: lists, definitions, notes they write themselves and summaries of what they read.</module>
<module name="kinesthetic">The learner understands best by doing: experiments, building models, moving around and trying the idea with their hands.</module>
<module name="social">The learner understands best with others: study groups, teaching a friend and working through problems together.</module>
</union>
3. Subject.
<union>
<module name="mathematics">Today's subject is mathematics: numbers, patterns, proofs and the art of solving problems step by step.</module>
<module name="history">Today's subject is history: what happened, why it happened, and how we know from the sources that survive.</module>
<module name="biology">Today's subject is biology: living things, from cells and genes to ecosystems, and how they change over time.</module>
<module name="literature">Today's subject is literature: stories, poems and plays, how they are made and what they say about people.</module>
<module name="programming">Today's subject is programming: telling a computer what to do with precise instructions, and finding the mistakes in them.</module>
</union>
4. Pace.
<union>
<module name="slow">The learner needs a slow pace with many examples, frequent checks of understanding and time to practise each step.</module>
<module name="steady">The learner likes a steady pace: one idea at a time, an example, a short exercise, then the next idea.</module>
<module name="fast">The learner likes a fast pace and gets bored by repetition; give the core idea quickly and move to harder cases.</module>
<module name="self_paced">The learner sets their own pace and wants material they can pause, skip and revisit.</module>
<module name="intensive">The learner is preparing for an exam soon and wants intensive practice on the topics most likely to come up.</module>
</union>
5. Motivation.
<union>
<module name="curious">The learner is driven by curiosity and loves to know why things are the way they are.</module>
<module name="grades">The learner is driven by grades and wants to know exactly what will be assessed.</module>
<module name="career">The learner is driven by a career goal and wants to see how each topic is used at work.</module>
<module name="reluctant">The learner is reluctant and easily discouraged; small wins and encouragement matter.</module>
<module name="competitive">The learner is competitive and enjoys challenges, scores and beating their own record.</module>
</union>
6. Language level.
<union>
<module name="beginner_english">The learner is a beginner in English; use short sentences and common words.</module>
<module name="intermediate_english">The learner speaks intermediate English; explain rare words when they appear.</module>
<module name="fluent_english">The learner is fluent in English; any register is fine.</module>
<module name="bilingual">The learner is bilingual and sometimes thinks in another language; analogies across languages help.</module>
<module name="academic_english">The learner reads academic English with ease; technical vocabulary is welcome.</module>
</union>
  </user>
</schema>
