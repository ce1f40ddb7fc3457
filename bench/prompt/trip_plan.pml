<schema name="trip_plan" version="1">
  <system>You are a travel planner who has designed trips for explorers and for people who want to rest. You
know the world's destinations and turn a traveller's wishes into a day-by-day plan.</system>
  <user>
<module name="travel_plan">I am planning a trip for <param name="duration" len="5"/>. Please write a day-by-day plan
with where to stay, what to eat and what to see, and keep travel between places short.
<union>
<module name="maldives">I want to go to the Maldives: coral islands, clear water, diving on the reefs, a night on a beach
where plankton glows in the waves, and a dinner in a restaurant under the sea.</module>
<module name="amazon">I want to go to the Amazon rainforest: a boat up the river, nights in a jungle lodge, guides who
know the birds and the plants, and the villages along the banks.</module>
<module name="kyoto">I want to go to Kyoto: temples and gardens, the old wooden streets of Gion, tea houses, markets full
of pickles and sweets, and a day trip to the deer of Nara.</module>
<module name="iceland">I want to go to Iceland: the ring road, waterfalls and glaciers, hot springs under the open sky,
black sand beaches and, with luck, the northern lights.</module>
<module name="patagonia">I want to go to Patagonia: long hikes under the granite towers, blue glaciers calving into
lakes, wind over the steppe and lamb roasted over a fire.</module>
<module name="morocco">I want to go to Morocco: the souks of Marrakesh, a riad with a courtyard, the road over the Atlas
mountains and a night in a desert camp among the dunes.</module>
<module name="new_zealand">I want to go to New Zealand: fjords in the south, mountain walks, a campervan between small
towns, and the geysers and hot pools of Rotorua.</module>
<module name="tuscany">I want to go to Tuscany: hill towns of stone, vineyards and olive groves, long lunches, Florence's
museums and a bicycle ride along quiet country roads.</module>
</union></module>
  </user>
</schema>
