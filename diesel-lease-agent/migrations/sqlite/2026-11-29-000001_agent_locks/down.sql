DROP TABLE user_settings;
DROP TABLE conversations;
